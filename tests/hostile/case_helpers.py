"""Shared pieces of the hostile-corpus generator (make_cases.py): the case list and the
builders of the usual config parts."""
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

