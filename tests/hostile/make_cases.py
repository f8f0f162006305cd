#!/usr/bin/env python3
"""Writes the hostile-config corpus: tests/hostile/cases/*.toml and tests/hostile/manifest.tsv.

The generated files are committed; rerun this script after editing it (it rewrites both, and
removes case files it no longer generates). Every case states what spikeforge must do with it:
the exit status (0 = it is valid and must run, 1 = toolchain/machine failure, 2 = input mistake;
"1,2" where either is acceptable), a regular expression the stderr must match when the status is
not 0, and extra command-line arguments. See README.md for the placeholders in arguments.

Injection attempts try to create the file HOSTILE_MARKER in the working directory of the run
(a fresh temporary directory per case); the runner fails any case that leaves it behind.
"""
import os
import pathlib

HERE = pathlib.Path(__file__).resolve().parent
CASES = HERE / "cases"

MARKER = "HOSTILE_MARKER"

# One entry per case: (stem, text, exit, regex, args, limit_s, comment)
ENTRIES = []


def case(stem, text, exit_code, regex, args="", limit="", comment="", binary=False):
    assert all(c.isalnum() or c == "_" for c in stem), stem
    assert stem not in {e[0] for e in ENTRIES}, stem
    ENTRIES.append((stem, text, str(exit_code), regex, args, str(limit), comment, binary))


# ---------------------------------------------------------------------------------------------
# Building blocks. dt = 1 ms and the runner's default --duration-ms 5 keep compiled cases tiny.

def model(name="hostile", dt="1.0", extra=""):
    return f'[model]\nname = "{name}"\ndt = {dt}\n{extra}\n'


LIF_PARAMS = dict(C="0.25", TauM="20.0", Vrest="-65.0", Vreset="-65.0", Vthresh="-50.0",
                  Ioffset="1.0", TauRefrac="2.0")


def inline(d):
    return "{ " + ", ".join(f"{k} = {v}" for k, v in d.items()) + " }"


def lif(name="P", size="4", V="-65.0", params=None, extra="", drop=()):
    p = dict(LIF_PARAMS)
    p.update(params or {})
    for k in drop:
        p.pop(k)
    return (f'[[populations]]\nname = "{name}"\nsize = {size}\nmodel = "LIF"\n'
            f"params = {inline(p)}\nvars = {{ V = {V}, RefracTime = 0.0 }}\n{extra}\n")


def poisson(name="Src", size="4", rate="10.0", extra=""):
    return (f'[[populations]]\nname = "{name}"\nsize = {size}\nmodel = "Poisson"\n'
            f"params = {{ rate = {rate} }}\nvars = {{ timeStepToSpike = 0.0 }}\n{extra}\n")


def proj(name="S", source="Src", target="P", matrix="sparse",
         conn='{ init = "FixedProbability", prob = 0.5 }', wu='{ model = "StaticPulse", vars = { g = 0.1 } }',
         ps='{ model = "DeltaCurr" }', extra=""):
    conn_line = f"connectivity = {conn}\n" if conn else ""
    return (f'[[projections]]\nname = "{name}"\nsource = "{source}"\ntarget = "{target}"\n'
            f'matrix = "{matrix}"\n{conn_line}weight_update = {wu}\npostsynaptic = {ps}\n{extra}\n')


def toml_basic(text):
    """A TOML basic string holding `text` exactly (control characters escaped)."""
    out = []
    for c in text:
        if c in '"\\':
            out.append("\\" + c)
        elif c == "\n":
            out.append("\\n")
        elif c == "\r":
            out.append("\\r")
        elif ord(c) < 0x20 or ord(c) == 0x7F:
            out.append(f"\\u{ord(c):04x}")
        else:
            out.append(c)
    return '"' + "".join(out) + '"'


def hack(sim="V += dt * (-V) / tau;", params='["tau"]', vars_='["V"]', threshold="V > 1.0",
         reset="V = 0.0;", pvals="{ tau = 10.0 }", vvals="{ V = 0.0 }", size="2", extra_model="",
         basic=False):
    """A user-defined neuron model 'Hack' and one population 'H' that uses it. The code is a TOML
    literal string (backslashes stay as written) unless `basic` (for control characters)."""
    code = toml_basic(sim) if basic else f"'''\n{sim}\n'''"
    return (f"[neuron_models.Hack]\nparams = {params}\nvars = {vars_}\n"
            f"sim_code = {code}\nthreshold_condition_code = '''{threshold}'''\n"
            f"reset_code = '''{reset}'''\n{extra_model}\n"
            f'[[populations]]\nname = "H"\nsize = {size}\nmodel = "Hack"\n'
            f"params = {pvals}\nvars = {vvals}\n")


def sim(code, **kw):
    """A config whose only hostile part is the sim_code of population H."""
    return model() + hack(sim=code, **kw)


# Where a snippet error in population H's code must point, on the FIRST line of stderr: the
# checker must refuse the code, not the compiler ("generated code does not compile" fails).
SIM = r"\Aerror: [^\n]*\bH\.simCode"
THR = r"\Aerror: [^\n]*\bH\.thresholdConditionCode"
RESET = r"\Aerror: [^\n]*\bH\.resetCode"
# A refusal that is not the loader's "unknown key" (a key added by issue #6 must be understood).
def known_key(key):
    return rf"\A(?![^\n]*unknown key)[^\n]*{key}"

TOUCH = f'system("touch {MARKER}")'

VALID = model() + lif()

# ---------------------------------------------------------------------------------------------
# 1. Code injection through names and comments in generated code.


def injection_names():
    decl = 'extern \\"C\\" int system(const char*);'
    call = f'static int sf_pwn = system(\\"touch {MARKER}\\");'
    case("inj_name_newline_static_init",
         model(name=f"x\\n{decl}\\n{call}\\n//") + lif(), 2, r"name",
         comment="[model] name ends the generated comment and adds a static initialiser")
    case("inj_name_crlf_static_init",
         model(name=f"x\\r\\n{decl}\\r\\n{call}\\r\\n//") + lif(), 2, r"name")
    case("inj_name_cr_only", model(name=f"x\\r{decl}\\r{call}\\r//") + lif(), 2, r"name")
    case("inj_name_formfeed_vtab", model(name=f"x\\f\\u000b{decl}\\n{call}") + lif(), 2, r"name")
    case("inj_name_backslash_continuation",
         model(name="x\\\\") + lif(), 2, r"name",
         comment="a trailing backslash would splice the next generated line into the comment")
    case("inj_name_block_comment", model(name="x */ int y; /*") + lif(), 2, r"name")
    case("inj_name_quote", model(name="x' + system('touch " + MARKER + "') + '") + lif(), 2,
         r"name")
    case("inj_name_nul", model(name="ok\\u0000\\nstatic int z = 1;") + lif(), 2, r"name")
    case("inj_name_line_separator", model(name="x\\u2028int y;") + lif(), 2, r"name")
    case("inj_name_empty", model(name="") + lif(), 2, r"name")
    case("inj_name_too_long", model(name="n" * 5000) + lif(), 2, r"name")
    case("inj_name_keyword", model(name="int") + lif(), 2, r"name")
    case("inj_name_reserved_prefix", model(name="sf_plan") + lif(), 2, r"name")
    case("inj_name_double_underscore", model(name="a__b") + lif(), 2, r"name")
    case("inj_name_pragma", model(name="x\\n#pragma GCC poison V") + lif(), 2, r"name")
    case("inj_name_include", model(name="x\\n#include \\\"/etc/passwd\\\"") + lif(), 2, r"name")
    case("inj_name_not_string", model(name="x").replace('name = "x"', "name = 42") + lif(), 2,
         r"name")
    # Group names name arrays in generated code.
    case("inj_pop_name_semicolon", model() + lif(name="P; int x"), 2, r"name|P; int x")
    case("inj_pop_name_newline", model() + lif(name="P\\nint x;"), 2, r"name")
    case("inj_pop_name_reserved_prefix", model() + lif(name="sf_P"), 2, r"sf_P")
    case("inj_pop_name_leading_underscore", model() + lif(name="_P"), 2, r"_P")
    case("inj_pop_name_double_underscore", model() + lif(name="P__x"), 2, r"P__x")
    case("inj_pop_name_cpp_keyword", model() + lif(name="class"), 2, r"class")
    case("inj_pop_name_opencl_keyword", model() + lif(name="kernel"), 2, r"kernel")
    case("inj_pop_name_cuda_keyword", model() + lif(name="__global__"), 2, r"__global__")
    case("inj_proj_name_injection", model() + poisson() + lif() + proj(name="S(){}"), 2,
         r"name|S\(\)")
    case("inj_cs_name_injection",
         model() + lif() + '[[current_sources]]\nname = "C-1"\ntarget = "P"\nmodel = "DC"\n'
         "params = { amp = 0.5 }\n", 2, r"name|C-1")
    # Names inside user-defined models.
    case("inj_model_key_quoted",
         model() + '[neuron_models."A(){}"]\nparams = []\nvars = ["V"]\nsim_code = ""\n' +
         '[[populations]]\nname = "H"\nsize = 2\nmodel = "A(){}"\nvars = { V = 0.0 }\n', 2,
         r"A\(\)\{\}|model name")
    case("inj_var_type_injection",
         sim("V += 1.0;", vars_=f"[{{ name = 'V', type = 'int; }} static int q = {TOUCH}; void f() {{ int' }}]"),
         2, r"type")
    case("inj_var_type_pointer", sim("V += 1.0;", vars_='[{ name = "V", type = "scalar*" }]'), 2,
         r"type")
    case("inj_var_name_injection", sim("V += 1.0;", vars_='["V", "W[1]"]'), 2, r"W\[1\]|name")
    case("inj_param_name_injection", sim("V += 1.0;", params='["tau", "a b"]',
                                         pvals='{ tau = 10.0, "a b" = 1.0 }'), 2, r"a b|name")
    case("inj_var_access_injection",
         sim("V += 1.0;", vars_='[{ name = "V", access = "ReadWrite; system" }]'), 2, r"access")


def injection_preprocessor():
    # Digraphs: %: is '#', %:%: is '##'. Locals make every identifier "known" to a name check.
    # Maths-function names serve as macro names, so every call looks like an allowed call.
    locals_ = f"int define, x, a, b, sys, tem, touch, {MARKER};"
    case("inj_digraph_define_system",
         sim(f"{locals_}\n%:define erfc(x) %:x\n%:define hypot(a,b) a%:%:b\n"
             f"if (id == 0) hypot(sys,tem)(erfc(touch {MARKER}));\nV += 0.0;"), 2, SIM,
         comment="builds system(\"touch …\") from accepted identifiers with %:define, %: and %:%:")
    case("inj_digraph_include_computed",
         sim("int include, define, x, etc, passwd;\n%:define erfc(x) %:x\n"
             "%:include erfc(/etc/passwd)\nV += 0.0;"), 2, SIM)
    case("inj_digraph_pragma", sim("int pragma, GCC, poison;\n%:pragma GCC poison V\nV += 0.0;"), 2,
         SIM)
    case("inj_digraph_line", sim("int line;\n%:line 1\nV += 0.0;"), 2, SIM)
    case("inj_digraph_paste_only", sim("int a, b, ab;\nab = a %:%: b;\nV += 0.0;"), 2, SIM)
    case("inj_digraph_braces_unbalanced",
         sim("%>\nstatic int q = 0;\nvoid f() <%\nV += 0.0;"), 2, SIM,
         comment="<% and %> are braces to the compiler: closing the kernel function")
    case("inj_digraph_braces_balanced", sim("if (V > 0.5) <% V = 0.0; %>"), 2, SIM)
    case("inj_digraph_brackets", sim("scalar arr<:2:>;\narr<:0:> = 1.0;\nV += arr<:0:>;"), 2, SIM)
    # Trigraphs: ??= is '#', ??/ is '\', ??< ??> braces (C99 and OpenCL C honour them).
    case("inj_trigraph_define", sim("int define, x;\n??=define erfc(x) ??=x\nV += 0.0;"), 2, SIM)
    case("inj_trigraph_backslash", sim("// comment ??/\nV = 1000.0;\nV += 0.0;"), 2, SIM)
    case("inj_trigraph_braces", sim("if (V > 0.5) ??< V = 0.0; ??>"), 2, SIM)
    # Plain preprocessor lines.
    case("inj_hash_define", sim("#define X 1\nV += X;"), 2, SIM)
    case("inj_hash_include", sim('#include "/etc/passwd"\nV += 0.0;'), 2, SIM)
    case("inj_hash_include_angle", sim("#include </etc/passwd>\nV += 0.0;"), 2, SIM)
    case("inj_hash_indented", sim("   #  define X 1\nV += 0.0;"), 2, SIM)
    case("inj_hash_pragma", sim("#pragma GCC optimize(0)\nV += 0.0;"), 2, SIM)
    case("inj_hash_line", sim('#line 1 "elsewhere.cpp"\nV += 0.0;'), 2, SIM)
    case("inj_hash_if_zero", sim("#if 0\nV = 1.0;\n#endif\nV += 0.0;"), 2, SIM)
    case("inj_hash_in_threshold", sim("V += 0.0;", threshold="V > 1.0 #"), 2, THR)
    case("inj_pragma_operator", sim('_Pragma("GCC poison V")\nV += 0.0;'), 2, SIM)
    case("inj_pragma_operator_no_string", sim("_Pragma(V)\nV += 0.0;"), 2, SIM)
    # Line continuation: the scanner ends a // comment at the newline; the compiler does not.
    case("inj_continuation_comment_block",
         sim(f"// harmless \\\n/*\nif (id == 0) {{ static int q = {TOUCH}; }}\n// */\nV += 0.0;"),
         2, SIM,
         comment="'\\' ends a // comment line: the compiler then reads the next line as comment, "
                 "the checker the lines after '/*' as one")
    case("inj_continuation_comment_plain", sim("// note \\\nV = -1000.0;\nV += 1.0;"), 2, SIM)
    case("inj_continuation_code", sim("V = V \\\n+ 1.0;"), 2, SIM)
    case("inj_continuation_splice_ident", sim("int sys, tem;\nsys\\\ntem = 0;\nV += 0.0;"), 2, SIM)
    case("inj_continuation_crlf", sim("// note \\\r\nV = 1000.0;\nV += 0.0;", basic=True), 2, SIM)
    case("inj_block_comment_unterminated", sim("V += 1.0; /* never closed"), 2, SIM)
    case("inj_comment_in_threshold", sim("V += 0.0;", threshold="V > 1.0 // \\"), 2, THR)


def injection_words():
    words = {
        "string": f'if (id == 0) {{ {TOUCH}; }}',
        "char_literal": "int c = 'a';\nV += c;",
        "raw_string": 'int n = sizeof(R"(x)");\nV += n;',
        "asm": 'asm("nop");\nV += 0.0;',
        "gnu_asm": '__asm__ __volatile__("");\nV += 0.0;',
        "builtin_trap": "if (V > 1e9) __builtin_trap();\nV += 0.0;",
        "std_system": "std::system(0);\nV += 0.0;",
        "global_scope_system": "::system(0);\nV += 0.0;",
        "unknown_system": "system(0);\nV += 0.0;",
        "unknown_exit": "exit(0);",
        "unknown_abort": "abort();",
        "unknown_malloc": "int k = malloc(1000000000);\nV += k;",
        "unknown_printf": "printf(0);\nV += 0.0;",
        "return": "return;",
        "goto": "goto end;\nend: V += 0.0;",
        "static_local": "static int n = 0;\nn++;\nV += n;",
        "extern_decl": "extern int q;\nV += q;",
        "typedef": "typedef int T;\nT n = 0;\nV += n;",
        "struct": "struct A { int x; } a;\nV += a.x;",
        "union": "union U { int i; float f; } u;\nu.i = 1;\nV += u.f;",
        "enum": "enum E { A, B };\nV += B;",
        "member_access": "V += dt.x;",
        "arrow": "V += id->x;",
        "lambda": "auto f = [&]() { V = 0.0; };\nf();",
        "new_delete": "int n = *new int(3);\nV += n;",
        "reinterpret_cast": "V += reinterpret_cast<int>(V);",
        "functional_cast": "V += scalar(id);",
        "template": "template<int N> struct A {};\nV += 0.0;",
        "this": "V += this;",
        "volatile": "volatile int n = 0;\nV += n;",
        "register": "register int n = 0;\nV += n;",
        "thread_local": "thread_local int n = 0;\nV += n;",
        "attribute": "__attribute__((unused)) int n = 0;\nV += n;",
        "function_definition": "void f() { }\nV += 0.0;",
        "nested_function": "int f(int x) { return x; }\nV += f(1);",
        "sizeof_expression": "V += sizeof(V) + sizeof V;",
        "label_in_switch": "switch (id) { case 0: x: V += 1.0; break; }",
        "backtick_dollar": "int $x = 0;\nV += $x;",
        "at_sign": "V += @;",
        "non_ascii_identifier": "int \u00e9 = 1;\nV += \u00e9;",
        "utf8_bom_in_code": "\ufeffV += 1.0;",
    }
    for name, code in words.items():
        case(f"inj_word_{name}", sim(code), 2, SIM)
    case("inj_word_nul_byte", sim("V += 1.0;\u0000V = 5.0;", basic=True), 2, SIM)
    case("inj_word_escape_char", sim("V += 1.0;\u001b[2J", basic=True), 2, SIM)


# ---------------------------------------------------------------------------------------------
# 2. Memory safety: addresses, pointers, writes to read-only names, arrays.

def memory():
    thr = '["V", { name = "thr", access = "ReadOnly" }]'
    thr_vals = "{ V = 0.0, thr = 1.0 }"
    cases = {
        "address_of_readonly_var": ("(&thr)[0] = 1000.0;\nV += 0.0;", thr, thr_vals),
        "address_of_far_write": ("(&V)[100000000] = 1.0;", None, None),
        "address_of_far_read": ("V = (&V)[-100000000];", None, None),
        "address_of_builtin": ("int k = 0;\n(&k)[5] = 1;\nV += k;", None, None),
        "dereference": ("*(&V + 1) = 2.0;", None, None),
        "pointer_decl": ("scalar *p = 0;\nV += 0.0;", None, None),
        "pointer_arith": ("scalar p = *(&V);\nV = p;", None, None),
        "array_of_pointers": ("int *a[2];\nV += 0.0;", None, None),
        "paren_id_add_assign": ("(id) += 100000000;\nV = 1.0;", None, None),
        "paren_id_increment": ("(id)++;\nV = 1.0;", None, None),
        "pre_increment_paren_id": ("++(id);\nV = 1.0;", None, None),
        "double_paren_t": ("((t)) = 0.0;\nV += 0.0;", None, None),
        "assign_dt": ("dt = 100.0;\nV += 0.0;", None, None),
        "comma_lvalue_id": ("(0, id) = 5;\nV += 0.0;", None, None),
        "ternary_lvalue_id": ("(V > 0.0 ? id : id) = 3;\nV += 0.0;", None, None),
        "write_param": ("tau = 0.0;\nV += 0.0;", None, None),
        "write_paren_param": ("(tau) *= 2.0;\nV += 0.0;", None, None),
        "write_readonly_var": ("thr = 3.0;\nV += 0.0;", thr, thr_vals),
        "write_readonly_var_compound": ("(thr) -= 1.0;\nV += 0.0;", thr, thr_vals),
        "write_Isyn": ("Isyn = 5.0;\nV += 0.0;", None, None),
        "write_batch": ("batch++;\nV += 0.0;", None, None),
        "reference_cast": ("(scalar&)tau = 3.0;\nV += 0.0;", None, None),
        "pointer_cast": ("V += (scalar)(int*)0;", None, None),
        "void_cast_pointer": ("V += *(scalar*)(void*)&V;", None, None),
        "call_value": ("V = V(1.0);", None, None),
        "assign_function": ("exp = 0;\nV += 0.0;", None, None),
        "vla_from_local": ("int n = 3;\nscalar a[n];\na[0] = 1.0;\nV += a[0];", None, None),
        "vla_from_id": ("scalar a[id + 1];\na[0] = 1.0;\nV += a[0];", None, None),
        "array_huge": ("scalar a[100000000];\na[0] = 1.0;\nV += a[0];", None, None),
        "array_zero": ("scalar a[0];\nV += 0.0;", None, None),
        "array_negative": ("scalar a[-4];\nV += 0.0;", None, None),
        "array_const_index_past_end": ("scalar a[4];\na[4] = 1.0;\nV += a[0];", None, None),
        "array_const_index_negative": ("scalar a[4];\na[-1] = 1.0;\nV += a[0];", None, None),
        "array_assign_whole": ("scalar a[2];\nscalar b[2];\na = b;\nV += 0.0;", None, None),
        "array_as_value": ("scalar a[2];\nV += a;", None, None),
        "index_scalar_var": ("V = V[3];", None, None),
        "index_builtin": ("V += id[100000];", None, None),
        "int_div_const_zero": ("int k = 1 / 0;\nV += k;", None, None),
        "int_mod_const_zero": ("int k = id % 0;\nV += k;", None, None),
        "int_div_const_expr_zero": ("int k = 7 / (2 - 2);\nV += k;", None, None),
        "int_div_assign_zero": ("int k = 5;\nk /= 0;\nV += k;", None, None),
        "float_mod": ("V = V % 2.0;", None, None),
        "shadow_var_local": ("scalar V = 1.0;\nV += 0.0;", None, None),
        "shadow_math_local": ("scalar exp = 1.0;\nV += exp;", None, None),
        "shadow_builtin_local": ("scalar dt = 1.0;\nV += dt;", None, None),
        "wrong_arity_math": ("V = fmin(V);", None, None),
        "wrong_arity_rand": ("V = rand_uniform(3.0);", None, None),
        "unknown_function_neuron": ("addToPost(V);", None, None),
        "inject_in_neuron": ("injectCurrent(1.0);", None, None),
        "call_non_function": ("V = tau(2.0);", None, None),
    }
    for name, (code, vars_, vvals) in cases.items():
        kw = {}
        if vars_:
            kw = dict(vars_=vars_, vvals=vvals)
        case(f"mem_{name}", sim(code, **kw), 2, SIM)
    case("mem_threshold_assigns", sim("V += 0.0;", threshold="(V = 5.0) > 1.0"), 2, THR)
    case("mem_threshold_increments_id", sim("V += 0.0;", threshold="(id)++ > 1"), 2, THR)
    case("mem_reset_writes_id", sim("V += 0.0;", reset="id = 0;"), 2, RESET)
    # A variable index past the end: a reported error at run time or impossible by construction.
    case("mem_array_runtime_index", sim("scalar a[4];\nint k = 1000000 + id;\na[k] = 1.0;\nV += a[0];"),
         "1,2", r"(?i)\bH\b.*(index|range|bound)",
         comment="must be reported at run time, never written outside the array")


def user_model_fields():
    """Snippet attacks in the code fields of user-defined synapse and current-source models."""
    lit = "'''"

    def wu(code, field="pre_spike_syn_code", extra_proj=""):
        # 2 kHz at dt = 1 ms: every source spikes in every step, so the code runs.
        return (model() + poisson(rate="2000.0") + lif() +
                '[weight_update_models.W]\nparams = ["w"]\nvars = ["g"]\n'
                f'pre_vars = ["x"]\n{field} = {lit}{code}{lit}\n\n' +
                proj(wu='{ model = "W", params = { w = 0.5 }, vars = { g = 0.1 }, '
                        'pre_vars = { x = 0.0 } }', extra=extra_proj))

    def ps(code):
        return (model() + poisson() + lif() +
                f'[postsynaptic_models.Q]\nparams = ["tau"]\nsim_code = {lit}{code}{lit}\n\n' +
                proj(ps='{ model = "Q", params = { tau = 5.0 } }'))

    def cs(code):
        return (model() + lif() +
                f'[current_source_models.R]\nparams = ["amp"]\ninjection_code = {lit}{code}{lit}\n\n'
                '[[current_sources]]\nname = "Drive"\ntarget = "P"\nmodel = "R"\n'
                "params = { amp = 0.5 }\n")

    first = r"\Aerror: [^\n]*\b"
    case("field_wu_paren_id_pre", wu("addToPost(g);\n(id_pre) += 1000000;"), 2,
         first + r"S\.preSpikeSynCode")
    case("field_wu_address_of_g", wu("(&g)[1000000] = 1.0;\naddToPost(g);"), 2,
         first + r"S\.preSpikeSynCode")
    case("field_wu_digraph", wu("int define, x;\n%:define erfc(x) %:x\naddToPost(g);"), 2,
         first + r"S\.preSpikeSynCode")
    case("field_wu_write_param", wu("w = 2.0;\naddToPost(g);"), 2, first + r"S\.preSpikeSynCode")
    case("field_wu_pre_code_writes_id", wu("(id) = 3;", field="pre_spike_code"), 2,
         first + r"S\.preSpikeCode")
    case("field_wu_post_code_continuation",
         wu("// \\\n/*\nx = 1.0;\n// */", field="post_spike_code"), 2,
         first + r"S\.postSpikeCode")
    case("field_wu_delay_past_max",
         wu("addToPostDelay(g, 100);", extra_proj="max_dendritic_delay_steps = 4"), "1,2",
         r"(?i)S.*delay|delay.*S", comment="d >= max dendritic delay: an error, never wrapped")
    case("field_ps_hash", ps("#define Y 1\ninjectCurrent(inSyn);"), 2, first + r"S\.[\w.]*[sS]imCode")
    case("field_ps_write_target_var", ps("V = 0.0;\ninjectCurrent(inSyn);"), 2,
         first + r"S\.[\w.]*[sS]imCode")
    case("field_cs_address_of_param", cs("(&amp)[0] = 1.0;\ninjectCurrent(amp);"), 2,
         first + r"Drive\.injectionCode")
    case("field_cs_trigraph", cs("injectCurrent(amp) ??/\n;"), 2, first + r"Drive\.injectionCode")
    case("valid_user_models_all_kinds",
         model() + poisson() + lif() +
         '[weight_update_models.W]\nparams = ["w"]\nvars = ["g"]\n'
         f"pre_spike_syn_code = {lit}addToPost(g * w);{lit}\n"
         '[postsynaptic_models.Q]\nparams = ["tau"]\n'
         f"sim_code = {lit}injectCurrent(inSyn);\ninSyn -= dt * inSyn / tau;{lit}\n"
         f'[current_source_models.R]\nparams = ["amp"]\ninjection_code = {lit}injectCurrent(amp);{lit}\n\n' +
         proj(wu='{ model = "W", params = { w = 0.5 }, vars = { g = 0.1 } }',
              ps='{ model = "Q", params = { tau = 5.0 } }') +
         '[[current_sources]]\nname = "Drive"\ntarget = "P"\nmodel = "R"\nparams = { amp = 0.5 }\n',
         0, "")


# ---------------------------------------------------------------------------------------------
# 3. Huge and deep inputs.

def huge():
    case("huge_snippet_statements", sim("V += 0.0;\n" * 10000), 2, SIM,
         comment="100 KB of code: beyond the snippet size limit")
    case("huge_snippet_one_line", sim("V = " + "V + " * 25000 + "0.0;"), 2, SIM)
    case("slow_compile_limit", sim("V += 0.001 * V;\n" * 2000), 1,
         r"(?i)time|limit", args="--compile-timeout 0.05", limit=60,
         comment="2000 statements within the snippet limits, a 50 ms compile time limit: the "
                 "compiler is stopped and the limit reported")
    case("deep_parentheses", sim("V = " + "(" * 30000 + "V" + ")" * 30000 + ";"), 2, SIM,
         comment="a recursive-descent parser must bound its depth")
    case("deep_blocks", sim("{" * 30000 + "V += 1.0;" + "}" * 30000), 2, SIM)
    case("deep_if_chain", sim("if (V > 0.0) " * 4500 + "V = 0.0;"), 2, SIM)
    case("deep_unary_minus", sim("V = " + "- " * 30000 + "V;"), 2, SIM)
    case("deep_unary_not", sim("V = " + "!" * 60000 + "V;"), 2, SIM)
    case("deep_ternary", sim("V = " + "V > 0.0 ? 1.0 : " * 3500 + "0.0;"), 2, SIM)
    case("deep_unbalanced_open", sim("V = " + "(" * 60000 + ";"), 2, SIM)
    case("deep_expression_param",
         model() + '[parameters]\nQ = "' + "(" * 100000 + "1" + ")" * 100000 + '"\n' +
         lif(size='"Q"'), 2, r"Q|parameters")
    case("long_expression_param",
         model() + '[parameters]\nQ = "' + "1+" * 100000 + '1"\n' + lif(size='"Q"'), "0,2",
         r"Q|parameters|size", comment="a flat 200 KB sum (size 100001): valid, or refused")
    case("deep_toml_arrays", model() + "x = " + "[" * 20000 + "]" * 20000 + "\n" + lif(), 2,
         r"hostile\.toml|deep_toml_arrays")
    case("deep_toml_inline_tables", model() + "x = " + "{a=" * 20000 + "1" + "}" * 20000 + "\n" +
         lif(), 2, r"deep_toml_inline_tables")
    case("many_parameters",
         model() + "[parameters]\n" + "".join(f"p{i} = \"p{i + 1} + 1\"\n" for i in range(20000)) +
         "p20000 = -20000\n" + lif(params={"Ioffset": '"p0 + 1"'}), "0,2", r"p\d+|parameters",
         comment="a chain of 20000 parameters, each defined by the next: valid (Ioffset = 1) or "
                 "refused, never a stack overflow")
    case("long_key", model() + "k" * 100000 + " = 1\n" + lif(), 2, r"long_key|unknown")
    case("many_populations",
         model() + "".join(lif(name=f"P{i}", size="1") for i in range(1000)), "0,1,2",
         r"(?i)P\d+|limit|too many", limit=120,
         comment="1000 groups: must run or be refused with a message, never crash")


# ---------------------------------------------------------------------------------------------
# 4. Numbers: NaN, infinities, overflow, domains of parameters and initialisers.

def numbers():
    for name, value in {"nan": "nan", "inf": "inf", "minus_inf": "-inf"}.items():
        case(f"num_lif_C_{name}", model() + lif(params={"C": value}), 2, r"P.*C|C.*P")
    case("num_float_overflow_param", model() + lif(params={"Ioffset": "1e39"}), 2,
         r"P.*Ioffset|Ioffset.*P", comment="finite as a double, inf as the model's float")
    case("num_float_overflow_init", model() + lif(V="-1e39"), 2, r"P.*V|V.*P")
    case("num_float_overflow_expression", model() + '[parameters]\nbig = "1e30 * 1e30"\n' +
         lif(params={"Ioffset": '"big"'}), 2, r"Ioffset|big")
    case("num_double_overflow_expression", model() + '[parameters]\nbig = "1e300 * 1e300"\n' +
         lif(), 2, r"big|overflow")
    case("num_toml_huge_float", model() + lif(params={"TauM": "1e400"}), 2,
         r"TauM|num_toml_huge_float\.toml:\d+")
    case("num_toml_huge_integer", model() + lif(size="99999999999999999999"), 2,
         r"num_toml_huge_integer\.toml:\d+")
    case("num_expression_div_zero", model() + lif(params={"TauM": '"20 / 0"'}), 2, r"TauM|zero")
    case("num_expression_function", model() + lif(params={"TauM": '"exp(3)"'}), 2, r"TauM")
    case("num_expression_power", model() + lif(params={"TauM": '"2^4"'}), 2, r"TauM")
    case("num_expression_nan_word", model() + lif(params={"TauM": '"nan"'}), 2, r"TauM|nan")
    case("num_double_model_nan_var", model(extra='precision = "double"') + lif(V="nan"), 2,
         r"P.*V|V.*P")
    # Built-in neuron and postsynaptic domains.
    case("num_lif_C_zero", model() + lif(params={"C": "0.0"}), 2, r"\bC\b")
    case("num_lif_taum_negative", model() + lif(params={"TauM": "-20.0"}), 2, r"TauM")
    case("num_lif_taurefrac_negative", model() + lif(params={"TauRefrac": "-1.0"}), 2,
         r"TauRefrac")
    case("num_poisson_negative_rate", model() + poisson(rate="-5.0") + lif(), 2, r"rate")
    case("num_poisson_nan_rate", model() + poisson(rate="nan") + lif(), 2, r"rate")
    case("num_expcurr_tau_zero", model() + poisson() + lif() +
         proj(ps='{ model = "ExpCurr", params = { tau = 0.0 } }'), 2, r"tau")
    case("num_expcond_tau_negative", model() + poisson() + lif() +
         proj(ps='{ model = "ExpCond", params = { tau = -5.0, E = 0.0 } }'), 2, r"tau")
    # Variable initialisers.
    bad_inits = {
        "uniform_min_gt_max": '{ init = "Uniform", min = 1.0, max = -1.0 }',
        "uniform_nan": '{ init = "Uniform", min = nan, max = 1.0 }',
        "normal_sd_negative": '{ init = "Normal", mean = 0.0, sd = -1.0 }',
        "normal_sd_inf": '{ init = "Normal", mean = 0.0, sd = inf }',
        "normalclipped_min_gt_max":
            '{ init = "NormalClipped", mean = 0.0, sd = 1.0, min = 1.0, max = -1.0 }',
        "normalclipped_empty": '{ init = "NormalClipped", mean = 0.0, sd = 1.0, min = 0.5, max = 0.5 }',
        "normalclipped_unreachable":
            '{ init = "NormalClipped", mean = -65.0, sd = 1.0, min = 100.0, max = 200.0 }',
        "normalclipped_sd_zero_outside":
            '{ init = "NormalClipped", mean = 0.0, sd = 0.0, min = 1.0, max = 2.0 }',
        "exponential_lambda_zero": '{ init = "Exponential", lambda = 0.0 }',
        "exponential_lambda_negative": '{ init = "Exponential", lambda = -2.0 }',
        "gamma_a_zero": '{ init = "Gamma", a = 0.0, b = 1.0 }',
        "gamma_b_negative": '{ init = "Gamma", a = 2.0, b = -1.0 }',
        "binomial_n_too_big": '{ init = "Binomial", n = 5e9, p = 0.5 }',
        "binomial_n_negative": '{ init = "Binomial", n = -3, p = 0.5 }',
        "binomial_n_fraction": '{ init = "Binomial", n = 2.5, p = 0.5 }',
        "binomial_p_above_one": '{ init = "Binomial", n = 10, p = 1.5 }',
        "binomial_p_negative": '{ init = "Binomial", n = 10, p = -0.5 }',
        "init_unknown": '{ init = "Uniformm", min = 0.0, max = 1.0 }',
        "init_missing_param": '{ init = "Uniform", min = 0.0 }',
        "init_extra_param": '{ init = "Uniform", min = 0.0, max = 1.0, mean = 3.0 }',
        "init_param_string": '{ init = "Uniform", min = "low", max = 1.0 }',
        "init_not_string": '{ init = 5, min = 0.0, max = 1.0 }',
        "init_missing_init": '{ min = 0.0, max = 1.0 }',
    }
    for name, init in bad_inits.items():
        case(f"init_{name}", model() + lif(V=init), 2, r"P.*V|V.*P", limit=30)
    # Connectivity.
    conns = {
        "prob_above_one": '{ init = "FixedProbability", prob = 1.5 }',
        "prob_negative": '{ init = "FixedProbability", prob = -0.1 }',
        "prob_nan": '{ init = "FixedProbability", prob = nan }',
        "noautapse_prob_above_one": '{ init = "FixedProbabilityNoAutapse", prob = 2.0 }',
        "rowlength_negative": '{ init = "FixedNumberPostWithReplacement", rowLength = -1 }',
        "rowlength_fraction": '{ init = "FixedNumberPostWithReplacement", rowLength = 1.5 }',
        "rowlength_huge": '{ init = "FixedNumberPostWithReplacement", rowLength = 1e12 }',
        "total_negative": '{ init = "FixedNumberTotalWithReplacement", total = -5 }',
        "total_huge": '{ init = "FixedNumberTotalWithReplacement", total = 1e15 }',
        "unknown_init": '{ init = "AllToAll" }',
        "onetoone_with_param": '{ init = "OneToOne", prob = 0.5 }',
    }
    for name, conn in conns.items():
        case(f"conn_{name}", model() + poisson() + lif() + proj(conn=conn), 2, r"\bS\b", limit=30)
    case("conn_onetoone_size_mismatch",
         model() + poisson(size="3") + lif() + proj(conn='{ init = "OneToOne" }'), "0,2",
         r"S", comment="3 sources onto 4 targets one-to-one: valid or refused, never a stray index")
    case("conn_dense_with_connectivity", model() + poisson() + lif() + proj(matrix="dense"), 2,
         r"S.*connectivity|connectivity")
    case("conn_sparse_without_connectivity", model() + poisson() + lif() + proj(conn=""), 2,
         r"S.*connectivity|connectivity")
    case("conn_matrix_unknown", model() + poisson() + lif() + proj(matrix="diagonal"), 2,
         r"matrix")
    case("conn_delay_negative", model() + poisson() + lif() + proj(extra="delay_steps = -1"), 2,
         r"delay_steps")
    case("conn_delay_huge", model() + poisson() + lif() + proj(extra="delay_steps = 4294967295"), 2,
         r"delay")
    case("conn_dendritic_delay_zero",
         model() + poisson() + lif() + proj(extra="max_dendritic_delay_steps = 0"), 2,
         r"max_dendritic_delay_steps")
    case("stdp_param_nan",
         model() + poisson() + lif() +
         proj(wu='{ model = "STDPNearest", params = { tauPlus = nan, tauMinus = 20.0, '
                 'Aplus = 0.01, Aminus = 0.01, Wmin = 0.0, Wmax = 1.0 }, vars = { g = 0.5 } }'),
         2, r"tauPlus")


# ---------------------------------------------------------------------------------------------
# 5. Run length, time step, batch, sizes.

def run_length():
    case("time_dt_zero", model(dt="0.0") + lif(), 2, r"\bdt\b")
    case("time_dt_negative", model(dt="-0.1") + lif(), 2, r"\bdt\b")
    case("time_dt_nan", model(dt="nan") + lif(), 2, r"\bdt\b")
    case("time_dt_inf", model(dt="inf") + lif(), 2, r"\bdt\b")
    case("time_dt_string", model(dt='"fast"') + lif(), 2, r"dt")
    case("time_dt_date", model(dt="1979-05-27") + lif(), 2, r"\bdt\b")
    case("time_dt_tiny", model(dt="1e-300") + lif(), 2, r"(?i)steps|dt|duration",
         comment="5 ms of 1e-300 ms steps: too many steps")
    case("time_duration_zero_config", model(extra="duration_ms = 0.0") + lif(), 2,
         r"duration", args="{config-duration}")
    case("time_duration_below_half_step", model(extra="duration_ms = 0.4") + lif(), 2,
         r"(?i)duration|step", args="{config-duration}")
    case("time_duration_negative_config", model(extra="duration_ms = -5.0") + lif(), 2,
         r"duration", args="{config-duration}")
    case("time_duration_missing", model() + lif(), 2, r"duration", args="{config-duration}")
    case("time_cli_duration_zero", VALID, 2, r"duration", args="--duration-ms 0")
    case("time_cli_duration_tiny", VALID, 2, r"(?i)duration|step", args="--duration-ms 0.1")
    case("time_cli_duration_nan", VALID, 2, r"duration", args="--duration-ms nan")
    case("time_cli_duration_inf", VALID, 2, r"duration", args="--duration-ms inf")
    case("time_cli_duration_huge", VALID, 2, r"(?i)duration|steps", args="--duration-ms 1e300")
    case("time_cli_duration_too_many_steps", VALID, 2, r"(?i)duration|steps",
         args="--duration-ms 1e14", comment="1e14 steps: beyond the documented step limit")
    case("time_cli_duration_text", VALID, 2, r"duration", args="--duration-ms soon")
    case("batch_zero", model(extra="batch = 0") + lif(), 2, r"batch")
    case("batch_negative", model(extra="batch = -2") + lif(), 2, r"batch")
    case("batch_huge", model(extra="batch = 1000000000") + lif(), 2, r"batch")
    case("batch_fraction", model(extra="batch = 1.5") + lif(), 2, r"batch")
    case("batch_cli_zero", VALID, 2, r"batch", args="--batch 0")
    case("batch_cli_huge", VALID, 2, r"batch", args="--batch 4294967295")
    case("threads_negative", VALID, 2, r"threads", args="--threads -1")
    case("seed_negative", model(extra="seed = -1") + lif(), 2, r"seed")
    case("precision_unknown", model(extra='precision = "half"') + lif(), 2, r"precision")
    case("size_zero", model() + lif(size="0"), 2, r"size")
    case("size_negative", model() + lif(size="-4"), 2, r"size")
    case("size_fraction", model() + lif(size="4.5"), 2, r"size")
    case("size_2_pow_32", model() + lif(size="4294967296"), 2, r"size")
    case("size_expression_fraction",
         model() + "[parameters]\nN = 4001\n" + lif(size='"0.8*N"'), 2, r"size")
    case("size_times_batch_overflow", model(extra="batch = 65536") + lif(size="4294967295"), 2,
         r"(?i)P|size|batch", limit=30)
    case("size_sparse_too_big",
         model() + poisson(size="200000") + lif(size="200000") +
         proj(conn='{ init = "FixedNumberPostWithReplacement", rowLength = 100000 }'), "1,2",
         r"\bS\b", limit=60, comment="2e10 sparse synapses: an error naming the projection")
    case("size_dense_too_big",
         model() + poisson(size="200000") + lif(size="200000") +
         proj(matrix="dense", conn=""), "1,2", r"\bS\b",
         limit=60, comment="4e10 dense synapses: an error naming the projection, not bad_alloc")


# ---------------------------------------------------------------------------------------------
# 6. Malformed TOML, wrong types, unknown keys, duplicates, missing pieces.

def toml_syntax():
    base = VALID
    broken = {
        "unterminated_string": model().replace('"hostile"', '"hostile'),
        "unterminated_header": "[model\ndt = 1.0\n" + lif(),
        "brace_header": "[{a]\n" + base,
        "bad_escape": model(name="a\\qb") + lif(),
        "bare_key_space": base + "a b = 1\n",
        "missing_value": base + "x =\n",
        "duplicate_key": model() + "dt = 2.0\n" + lif(),
        "duplicate_table": base + "[model]\ndt = 2.0\n",
        "table_redefines_array": base + "[populations]\nname = 3\n",
        "inline_table_multiline": model() + lif().replace("params = { C = 0.25,", "params = {\nC = 0.25,"),
        "trailing_comma_inline": model() + lif().replace("RefracTime = 0.0 }", "RefracTime = 0.0, }"),
        "invalid_utf8": base + "# \xff\xfe\n",
        "control_char_in_string": model(name="a\x01b") + lif(),
        "binary_garbage": "".join(chr((i * 131 + 7) % 256) for i in range(4096)),
        "only_garbage_header": "\x00\x00\x00\x00",
        "leading_zero_int": model() + lif(size="04"),
        "float_leading_dot": model(dt=".5") + lif(),
        "multiline_key": base + '"a\nb" = 1\n',
        "unclosed_array": model() + lif(size="[1, 2"),
        "unterminated_multiline": model() + "x = '''\nnever closed\n" + lif(),
        "lone_bracket": base + "]\n",
    }
    for name, text in broken.items():
        binary = name in ("invalid_utf8", "binary_garbage", "only_garbage_header")
        case(f"toml_{name}", text, 2, rf"toml_{name}\.toml", binary=binary)
    case("toml_empty", "", 2, r"model")
    case("toml_only_comments", "# nothing here\n# at all\n", 2, r"model")


def schema():
    base = model()
    cases = {
        "populations_not_array": ('populations = "P"\n' + base, r"populations"),
        "populations_table": (base + '[populations]\nname = "P"\n', r"populations"),
        "populations_missing": (base, r"populations"),
        "model_not_table": ('model = 3\n' + lif(), r"model"),
        "model_missing": (lif(), r"model"),
        "unknown_top_level": (VALID + "[modle]\nx = 1\n", r"modle"),
        "unknown_model_key": (model(extra="dtt = 0.1") + lif(), r"dtt"),
        "unknown_pop_key": (base + lif(extra="sise = 4"), r"sise"),
        "unknown_proj_key": (base + poisson() + lif() + proj(extra="delay = 3"), r"delay"),
        "unknown_param": (base + lif(params={"Vth": "-50.0"}), r"Vth"),
        "missing_param": (base + lif(drop=("TauM",)), r"TauM"),
        "unknown_var": (base + lif(V="-65.0, W = 1.0"), r"W"),
        "missing_var": (base + lif().replace(", RefracTime = 0.0", ""), r"RefracTime"),
        "size_string_word": (base + lif(size='"four"'), r"size"),
        "size_bool": (base + lif(size="true"), r"size"),
        "size_array": (base + lif(size="[4]"), r"size"),
        "model_number": (base + lif().replace('model = "LIF"', "model = 5"), r"model"),
        "model_unknown": (base + lif().replace('model = "LIF"', 'model = "LIFF"'), r"LIFF"),
        "params_array": (base + lif().replace(lif().split("\n")[4], "params = [0.25, 20.0]"),
                         r"params"),
        "vars_string": (base + lif().replace("vars = { V = -65.0, RefracTime = 0.0 }",
                                             'vars = "V"'), r"vars"),
        "record_spikes_string": (base + lif(extra='record_spikes = "yes"'), r"record_spikes"),
        "name_missing": (base + lif().replace('name = "P"\n', ""), r"name"),
        "name_number": (base + lif().replace('name = "P"', "name = 7"), r"name"),
        "proj_source_unknown": (base + poisson() + lif() + proj(source="Nope"), r"Nope"),
        "proj_target_unknown": (base + poisson() + lif() + proj(target="Nope"), r"Nope"),
        "proj_missing_postsynaptic": (base + poisson() + lif() + proj().replace(
            'postsynaptic = { model = "DeltaCurr" }\n', ""), r"postsynaptic"),
        "proj_missing_weight_update": (base + poisson() + lif() + proj().replace(
            'weight_update = { model = "StaticPulse", vars = { g = 0.1 } }\n', ""), r"weight_update"),
        "proj_wu_unknown_model": (base + poisson() + lif() + proj(wu='{ model = "StaticPulsee" }'),
                                  r"StaticPulsee"),
        "proj_wu_missing_var": (base + poisson() + lif() + proj(wu='{ model = "StaticPulse" }'),
                                r"g"),
        "proj_ps_neuron_model": (base + poisson() + lif() + proj(ps='{ model = "LIF" }'), r"LIF"),
        "cs_target_unknown": (base + lif() + '[[current_sources]]\nname = "C"\ntarget = "Q"\n'
                              'model = "DC"\nparams = { amp = 0.5 }\n', r"Q"),
        "cs_missing_param": (base + lif() + '[[current_sources]]\nname = "C"\ntarget = "P"\n'
                             'model = "DC"\n', r"amp"),
        "duplicate_population": (base + lif() + lif(), r"P"),
        "duplicate_pop_and_proj": (base + poisson() + lif() + proj(name="P"), r"P"),
        "duplicate_cs_and_pop": (base + lif() + '[[current_sources]]\nname = "P"\ntarget = "P"\n'
                                 'model = "DC"\nparams = { amp = 0.5 }\n', r"P"),
        "user_model_named_builtin": (base + '[neuron_models.LIF]\nparams = []\nvars = ["V"]\n' +
                                     lif(), r"LIF"),
        "user_model_param_twice": (sim("V += 1.0;", params='["tau", "tau"]'), r"tau"),
        "user_model_param_var_same": (sim("V += 1.0;", params='["tau", "V"]',
                                          pvals="{ tau = 10.0, V = 1.0 }"), r"V"),
        "user_model_unknown_key": (sim("V += 1.0;", extra_model='derived_params = ["x"]'),
                                   r"derived_params"),
        "user_model_code_not_string": (base + "[neuron_models.Hack]\nparams = []\nvars = [\"V\"]\n"
                                       "sim_code = 42\n", r"sim_code"),
        "param_circular": (base + '[parameters]\na = "b"\nb = "a"\n' + lif(size='"a"'), r"a|b"),
        "param_self": (base + '[parameters]\na = "a + 1"\n' + lif(size='"a"'), r"a"),
        "param_unknown_name": (base + '[parameters]\nN = 4\n' + lif(size='"M"'), r"M"),
        "param_non_identifier": (base + '[parameters]\n"1x" = 3\n' + lif(), r"1x"),
        "param_bool": (base + '[parameters]\nN = true\n' + lif(size='"N"'), r"N"),
    }
    for name, (text, regex) in cases.items():
        case(f"schema_{name}", text, 2, regex)


def shadowing():
    shadow = {
        "param_dt": ('["tau", "dt"]', '["V"]', "{ tau = 10.0, dt = 1.0 }", "{ V = 0.0 }", r"dt"),
        "param_t": ('["tau", "t"]', '["V"]', "{ tau = 10.0, t = 1.0 }", "{ V = 0.0 }", r"\bt\b"),
        "var_id": ('["tau"]', '["V", "id"]', "{ tau = 10.0 }", "{ V = 0.0, id = 0.0 }", r"\bid\b"),
        "var_t": ('["tau"]', '["V", "t"]', "{ tau = 10.0 }", "{ V = 0.0, t = 0.0 }", r"\bt\b"),
        "var_Isyn": ('["tau"]', '["V", "Isyn"]', "{ tau = 10.0 }", "{ V = 0.0, Isyn = 0.0 }",
                     r"Isyn"),
        "var_batch": ('["tau"]', '["V", "batch"]', "{ tau = 10.0 }", "{ V = 0.0, batch = 0.0 }",
                      r"batch"),
        "param_exp": ('["tau", "exp"]', '["V"]', "{ tau = 10.0, exp = 1.0 }", "{ V = 0.0 }",
                      r"\bexp\b"),
        "var_rand_uniform": ('["tau"]', '["V", "rand_uniform"]', "{ tau = 10.0 }",
                             "{ V = 0.0, rand_uniform = 0.0 }", r"rand_uniform"),
        "var_keyword_int": ('["tau"]', '["V", "int"]', "{ tau = 10.0 }", "{ V = 0.0, int = 0.0 }",
                            r"\bint\b"),
        "var_opencl_global": ('["tau"]', '["V", "global"]', "{ tau = 10.0 }",
                              "{ V = 0.0, global = 0.0 }", r"global"),
        "var_reserved_sf": ('["tau"]', '["V", "sf_rng"]', "{ tau = 10.0 }",
                            "{ V = 0.0, sf_rng = 0.0 }", r"sf_rng"),
        "var_double_underscore": ('["tau"]', '["V", "x__y"]', "{ tau = 10.0 }",
                                  "{ V = 0.0, x__y = 0.0 }", r"x__y"),
    }
    for name, (params, vars_, pvals, vvals, regex) in shadow.items():
        case(f"shadow_{name}", sim("V += 0.0;", params=params, vars_=vars_, pvals=pvals,
                                   vvals=vvals), 2, regex)


# ---------------------------------------------------------------------------------------------
# 7. SpikeSourceArray and files.

def spike_sources():
    ssa = '[[populations]]\nname = "A"\nsize = 3\nmodel = "SpikeSourceArray"\n'
    case("ssa_without_times", model() + ssa + lif() +
         proj(source="A", conn='{ init = "OneToOne" }'), 2, r"A.*spike|spikeTimes|spike_times",
         comment="segfaulted: the spikeTimes EGP cannot be given without spike_times")
    case("ssa_times_negative", model() + ssa + "spike_times = [[1.0], [-2.0], []]\n" + lif(), 2,
         known_key("spike_times"))
    case("ssa_times_nan", model() + ssa + "spike_times = [[1.0], [nan], []]\n" + lif(), 2,
         known_key("spike_times"))
    case("ssa_times_wrong_count", model() + ssa + "spike_times = [[1.0], [2.0]]\n" + lif(), 2,
         known_key("spike_times"))
    case("ssa_times_not_numbers", model() + ssa + 'spike_times = [["a"], [], []]\n' + lif(), 2,
         known_key("spike_times"))
    case("ssa_times_file_missing", model() + ssa + 'spike_times_file = "nope.csv"\n' + lif(), "1,2",
         r"nope\.csv")
    case("ssa_times_file_device", model() + ssa + 'spike_times_file = "/dev/zero"\n' + lif(), 2,
         r"/dev/zero", limit=20)
    case("ssa_times_file_bad_row", model() + ssa + 'spike_times_file = "ssa_times_file_bad_row.csv"\n'
         + lif(), 2, r"ssa_times_file_bad_row\.csv:\d+")
    case("ssa_times_file_neuron_range",
         model() + ssa + 'spike_times_file = "ssa_times_file_neuron_range.csv"\n' + lif(), 2,
         r"ssa_times_file_neuron_range\.csv:\d+")


AUX_FILES = {
    "ssa_times_file_bad_row.csv": "neuron,time_ms\n0,1.0\n1,abc\n",
    "ssa_times_file_neuron_range.csv": "neuron,time_ms\n0,1.0\n7,2.0\n",
    "valid_ssa_file.csv": "neuron,time_ms\n0,1.0\n2,3.0\n1,0.0\n",
}


def files():
    case("record_onto_config", VALID, 2, r"(?i)record|exist|overwrite|force",
         args="--record {config}", comment="the config must stay unchanged")
    case("record_onto_config_dot_path", VALID, 2, r"(?i)record|exist|overwrite|force",
         args="--record ./{config}")
    case("record_onto_existing", VALID, 2, r"(?i)record|exist|overwrite|force",
         args="--record {existing}")
    case("record_onto_directory", VALID, "1,2", r"(?i)record|directory",
         args="--record {tmp}")
    case("record_missing_directory", VALID, "1,2", r"no_such_dir",
         args="--record no_such_dir/out.csv")
    case("set_unknown_parameter", VALID, 2, r"Nq", args="--set Nq=3")
    case("set_nan", model() + "[parameters]\nN = 4\n" + lif(size='"N"'), 2, r"N", args="--set N=nan")
    case("set_inf", model() + "[parameters]\nN = 4\n" + lif(size='"N"'), 2, r"N", args="--set N=inf")
    case("set_huge", model() + "[parameters]\nN = 4\n" + lif(size='"N"'), 2, r"N",
         args="--set N=1e400")
    case("set_text", model() + "[parameters]\nN = 4\n" + lif(size='"N"'), 2, r"N",
         args="--set N=abc")
    case("set_empty", model() + "[parameters]\nN = 4\n" + lif(size='"N"'), 2, r"set|N",
         args="--set N=")
    case("set_no_name", VALID, 2, r"set", args="--set =4")
    case("cli_unknown_option", VALID, 2, r"--bogus", args="--bogus 1")
    case("cli_unknown_backend", VALID, 2, r"backend", args="--backend nonesuch")


# ---------------------------------------------------------------------------------------------
# 8. Valid configs that look odd: each must run (exit 0).

def valid():
    case("valid_tiny_lif", VALID, 0, "")
    case("valid_record_force", VALID, 0, "", args="--record {existing} --force")
    case("valid_crlf", VALID.replace("\n", "\r\n"), 0, "")
    case("valid_bom", "\ufeff" + VALID, 0, "")
    case("valid_hex_size", model() + lif(size="0x4"), 0, "")
    case("valid_batch_limit", model(extra="batch = 65536") + lif(size="2"), 0, "", limit=60,
         comment="the largest batch the CLI accepts (docs/config.md)")
    case("valid_comment_with_hash",
         sim("// see issue #6: a comment that mentions #define and %: is only a comment\nV += 0.0;"),
         0, "", comment="comments are not code: nothing in them reaches the compiler")
    case("valid_binomial_large_n",
         model() + lif(V='{ init = "Binomial", n = 4000000000, p = 0.5 }'), 0, "", limit=30,
         comment="n = 4e9 took about a minute with the inversion sampler")
    case("valid_normalclipped_narrow",
         model() + lif(V='{ init = "NormalClipped", mean = -65.0, sd = 1.0, min = -65.1, max = -64.9 }'),
         0, "", limit=30)
    case("valid_ssa_inline", model() + '[[populations]]\nname = "A"\nsize = 3\n'
         'model = "SpikeSourceArray"\n'
         "spike_times = [[1.0, 3.0], [], [2.0]]\n" + lif() +
         proj(source="A", conn='{ init = "OneToOne" }'), 0, "")
    case("valid_ssa_file", model() + '[[populations]]\nname = "A"\nsize = 3\n'
         'model = "SpikeSourceArray"\n'
         'spike_times_file = "valid_ssa_file.csv"\n' + lif(), 0, "")
    case("valid_local_array_in_range",
         sim("scalar a[4];\nfor (int i = 0; i < 4; i++) { a[i] = 0.25 * i; }\nV += a[3] * dt / tau;"),
         0, "")


def special_inputs():
    """Inputs that are not TOML files; the runner creates them (see README.md)."""
    ENTRIES.append(("@fifo", None, "2", r"(?i)regular|fifo", "", "20", "a FIFO nobody writes to",
                    False))
    ENTRIES.append(("@dev_zero", None, "2", r"(?i)regular|/dev/zero|device", "", "20",
                    "an endless device", False))
    ENTRIES.append(("@dev_null", None, "2", r"(?i)regular|device", "", "20", "", False))
    ENTRIES.append(("@directory", None, "2", r"(?i)regular|directory", "", "20", "", False))
    ENTRIES.append(("@symlink_to_dev_zero", None, "2", r"(?i)regular|device|zero", "", "20", "",
                    False))
    ENTRIES.append(("@too_large", None, "2", r"(?i)MiB|bytes|limit|too (large|big)", "", "30",
                    "a valid config followed by 17 MiB of comments", False))
    ENTRIES.append(("@cache_path_injection", None, "0", "", "", "60",
                    "SPIKEFORGE_CACHE holds quotes, $(…), backquotes and ';': the compiler must "
                    "run without a shell", False))
    ENTRIES.append(("@missing", None, "1,2", r"(?i)missing\.toml", "", "20", "", False))


def main():
    injection_names()
    injection_preprocessor()
    injection_words()
    memory()
    user_model_fields()
    huge()
    numbers()
    run_length()
    toml_syntax()
    schema()
    shadowing()
    spike_sources()
    files()
    valid()
    special_inputs()

    CASES.mkdir(exist_ok=True)
    wanted = set()
    for stem, text, *_rest in ENTRIES:
        if text is None:
            continue
        binary = _rest[-1]
        path = CASES / f"{stem}.toml"
        wanted.add(path.name)
        if binary:
            path.write_bytes(text.encode("latin-1"))
        else:
            path.write_bytes(text.encode("utf-8"))
    for name, text in AUX_FILES.items():
        (CASES / name).write_text(text)
        wanted.add(name)
    for old in CASES.iterdir():
        if old.name not in wanted:
            old.unlink()

    lines = ["# case\texit\tstderr_regex\targs\tlimit_s\tcomment"]
    for stem, _text, code, regex, args, limit, comment, _binary in ENTRIES:
        for field in (regex, args, comment):
            assert "\t" not in field and "\n" not in field, stem
        name = stem if stem.startswith("@") else f"{stem}.toml"
        lines.append("\t".join([name, code, regex, args, limit, comment]))
    (HERE / "manifest.tsv").write_text("\n".join(lines) + "\n")
    toml_count = sum(1 for e in ENTRIES if e[1] is not None)
    print(f"{toml_count} TOML cases, {len(ENTRIES) - toml_count} special inputs")


if __name__ == "__main__":
    main()
