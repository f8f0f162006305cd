"""Hostile-corpus families about code: injection through names, the preprocessor, forbidden
words, memory safety, user-model code fields, huge and deep inputs."""
from case_helpers import (MARKER, RESET, SIM, THR, TOUCH, case, lif, model, poisson, proj, sim)


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


