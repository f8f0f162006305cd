// The naming rule (docs/names.md). Names are pasted into generated C++, CUDA and OpenCL C as
// identifiers and resolved in snippets next to built-ins, so a name must be a plain identifier
// that no compiler reads as a keyword, that cannot collide with the generator's own symbols
// (`sf…`, `SF_…`, `_…`, `__`), and that does not hide a built-in or another name of its scope.
#include "model/names.hpp"

#include "snippet/scanner.hpp"

#include <cstdio>
#include <map>
#include <set>

namespace spikeforge {

namespace {

constexpr std::size_t kMaxNameLength = 64;

// Keywords and reserved words of C (C99 to C23), C++20, OpenCL C and CUDA, plus type names and
// macros the generated code's headers define. Names starting with '_' are refused separately.
const std::set<std::string>& reservedWords() {
    static const std::set<std::string> words = [] {
        std::set<std::string> w = {
            // C
            "auto", "break", "case", "char", "const", "continue", "default", "do", "double", "else",
            "enum", "extern", "float", "for", "goto", "if", "inline", "int", "long", "register",
            "restrict", "return", "short", "signed", "sizeof", "static", "struct", "switch",
            "typedef", "union", "unsigned", "void", "volatile", "while", "alignas", "alignof",
            "bool", "true", "false", "nullptr", "static_assert", "thread_local", "typeof",
            "typeof_unqual", "constexpr",
            // C++
            "and", "and_eq", "asm", "bitand", "bitor", "catch", "char8_t", "char16_t", "char32_t",
            "class", "compl", "concept", "consteval", "constinit", "const_cast", "co_await",
            "co_return", "co_yield", "decltype", "delete", "dynamic_cast", "explicit", "export",
            "friend", "mutable", "namespace", "new", "noexcept", "not", "not_eq", "operator", "or",
            "or_eq", "private", "protected", "public", "reinterpret_cast", "requires",
            "static_cast", "template", "this", "throw", "try", "typeid", "typename", "using",
            "virtual", "wchar_t", "xor", "xor_eq", "final", "override", "import", "module", "std",
            // OpenCL C: address spaces, access qualifiers and built-in types
            "kernel", "global", "local", "constant", "read_only", "write_only", "read_write",
            "uniform", "pipe", "half", "uchar", "ushort", "uint", "ulong", "quad", "image1d_t",
            "image2d_t", "image3d_t", "image1d_array_t", "image2d_array_t", "image1d_buffer_t",
            "sampler_t", "event_t", "ptrdiff_t", "intptr_t", "uintptr_t",
            // CUDA built-in variables and types
            "threadIdx", "blockIdx", "blockDim", "gridDim", "warpSize", "dim3",
            // types and macros of the generated code and its headers
            "scalar", "size_t", "int8_t", "uint8_t", "int16_t", "uint16_t", "int32_t", "uint32_t",
            "int64_t", "uint64_t", "NULL", "INFINITY", "NAN", "HUGE_VAL", "HUGE_VALF", "EOF",
            "errno", "assert", "main", "M_PI", "M_E", "FLT_MAX", "DBL_MAX"};
        // OpenCL vector types: float4, uchar16, …
        for (const char* base : {"char", "uchar", "short", "ushort", "int", "uint", "long", "ulong",
                                 "float", "double", "half", "bool"})
            for (const char* n : {"2", "3", "4", "8", "16"})
                w.insert(std::string(base) + n);
        return w;
    }();
    return words;
}

// C99 <math.h> and OpenCL C common functions that snippets cannot call (yet): reserved so that a
// future addition to the snippet function table (snippet::functionInfo) breaks no model.
const std::set<std::string>& reservedMathNames() {
    static const std::set<std::string> names = {
        "min",       "max",    "isfinite",  "signbit", "nan",     "ldexp", "frexp",  "modf",
        "remainder", "remquo", "nearbyint", "lround",  "llround", "lrint", "llrint", "fdim",
        "nextafter", "scalbn", "logb",      "ilogb",   "rsqrt",   "clamp", "mix",    "mad"};
    return names;
}

// `min` and `max` are GeNN's parameter names for Uniform and NormalClipped. A parameter is
// folded into the code or read from the group's struct, never declared under its own name, so
// these two are allowed for parameters; inside that snippet fmin/fmax remain available.
bool isParamException(const std::string& name) {
    return name == "min" || name == "max";
}

std::string problem(const std::string& name, bool parameter) {
    if (name.empty()) return "is empty";
    const auto isAlpha = [](char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
    };
    const auto isDigit = [](char c) { return c >= '0' && c <= '9'; };
    bool identifier = isAlpha(name[0]);
    for (char c : name)
        identifier = identifier && (isAlpha(c) || isDigit(c));
    if (!identifier)
        return "is not an identifier (letters, digits and '_', not starting with a digit)";
    if (name.size() > kMaxNameLength)
        return "is longer than " + std::to_string(kMaxNameLength) + " characters";
    if (name[0] == '_') return "starts with '_', which is reserved for the compilers";
    if (name.find("__") != std::string::npos)
        return "contains '__', which is reserved for the compilers";
    if (name.rfind("sf", 0) == 0 || name.rfind("SF_", 0) == 0)
        return "starts with '" + name.substr(0, name[0] == 's' ? 2 : 3) +
               "', which is reserved for generated code";
    if (reservedWords().count(name)) return "is a reserved word of C, C++, OpenCL C or CUDA";
    if (names::builtinNames().count(name)) return "shadows the built-in '" + name + "'";
    const snippet::FunctionInfo* function = snippet::functionInfo(name);
    if (function && !function->maths) return "shadows the built-in '" + name + "'";
    if ((function || reservedMathNames().count(name)) && !(parameter && isParamException(name)))
        return "shadows the maths function '" + name + "'";
    return "";
}

// A refused name as shown in a message: control and non-ASCII bytes escaped (a name may hold a
// newline or a terminal escape), at most 80 characters.
std::string shown(const std::string& name) {
    std::string out;
    for (unsigned char c : name.substr(0, 80)) {
        if (c >= 0x20 && c < 0x7f && c != '\\') {
            out += static_cast<char>(c);
        } else {
            char buf[8];
            std::snprintf(buf, sizeof buf, "\\x%02x", c);
            out += buf;
        }
    }
    return name.size() > 80 ? out + "..." : out;
}

} // namespace

std::string identifierProblem(const std::string& name) {
    return problem(name, false);
}

namespace names {

// Names with a meaning in some code field (src/model/contexts.cpp): one list for every field,
// so a name is never a built-in in one place and the user's in another.
const std::set<std::string>& builtinNames() {
    static const std::set<std::string> names = {"t",           "dt",
                                                "id",          "batch",
                                                "Isyn",        "st",
                                                "num_neurons", "id_pre",
                                                "id_post",     "st_pre",
                                                "st_post",     "num_pre",
                                                "num_post",    "num_batch",
                                                "inSyn",       "value",
                                                "updateCount", "preCalcRowLength",
                                                "addToPre",    "prev_st",
                                                "prev_st_pre", "prev_st_post",
                                                "set_pre",     "set_post"};
    return names;
}

void checkIdentifier(const std::string& name, const std::string& what) {
    if (const auto p = problem(name, false); !p.empty())
        throw ModelError(what + " '" + shown(name) + "' " + p);
}

namespace {

// The names visible together in some code field. Each is described ("variable 'V'") so that a
// clash names both sides.
class Scope {
public:
    explicit Scope(std::string prefix) : m_prefix(std::move(prefix)) {}

    // A name this scope declares: it must obey the rule.
    void declare(const std::string& name, const std::string& kind, bool parameter = false) {
        if (const auto p = problem(name, parameter); !p.empty())
            throw ModelError(m_prefix + kind + " '" + shown(name) + "' " + p);
        add(name, kind + " '" + name + "'");
    }

    // A name another group declares (and validated there) that this scope sees too, possibly
    // under a suffix: `V` of the source group is `V_pre` here.
    void see(const std::string& name, const std::string& description) {
        if (builtinNames().count(name))
            throw ModelError(m_prefix + description + " shadows the built-in '" + name + "'");
        add(name, description);
    }

    // A name of a neighbouring group that this scope's own names shadow (GeNN's namespaces: a
    // current source may have a variable named as one of its target's); visible only when no
    // own name has it.
    void seeUnlessOwn(const std::string& name, const std::string& description) {
        if (!m_names.count(name)) see(name, description);
    }

    void snippet(const SnippetBase& s) {
        for (const auto& p : s.params)
            declare(p, "parameter", true);
        for (const auto& d : s.derivedParams)
            declare(d.name, "derived parameter", true);
        for (const auto& e : s.egps)
            declare(e.name, "extra global parameter");
    }

    void vars(const std::vector<VarDecl>& vars, const std::string& kind = "variable") {
        for (const auto& v : vars)
            declare(v.name, kind);
    }

private:
    void add(const std::string& name, const std::string& description) {
        const auto [it, inserted] = m_names.emplace(name, description);
        if (!inserted) throw ModelError(m_prefix + description + " clashes with " + it->second);
    }

    std::string m_prefix;
    std::map<std::string, std::string> m_names;
};

// A group's device arrays are named "<group>.<name>" (codegen/arrays.cpp): its variables and
// EGPs — of every snippet the group holds — next to the arrays the generator keeps for that kind
// of group. Two of them under one name would silently share storage, so a group's stored names
// are distinct from each other and from the generator's (scopes alone do not see this: the
// weight-update and postsynaptic models of a synapse group are separate scopes).
class Storage {
public:
    Storage(std::string group, std::set<std::string> generated)
        : m_group(std::move(group)), m_generated(std::move(generated)) {}

    void add(const std::string& name, const std::string& description) {
        const std::string array = "'" + m_group + "." + name + "'";
        if (m_generated.count(name))
            throw ModelError("group '" + m_group + "': " + description +
                             " would be stored in the array " + array +
                             " that the generator keeps for the group; rename it");
        const auto [it, inserted] = m_names.emplace(name, description);
        if (!inserted)
            throw ModelError("group '" + m_group + "': " + description + " and " + it->second +
                             " would both be stored in the array " + array + "; rename one");
    }

    void stored(const std::vector<VarDecl>& vars, const std::vector<EGPDecl>& egps,
                const std::string& kind, const std::string& model) {
        for (const auto& v : vars)
            add(v.name, kind + "variable '" + v.name + "' of model '" + model + "'");
        for (const auto& e : egps)
            add(e.name, kind + "extra global parameter '" + e.name + "' of model '" + model + "'");
    }

private:
    std::string m_group;
    std::set<std::string> m_generated;
    std::map<std::string, std::string> m_names;
};

std::string prefix(const std::string& group, const std::string& field) {
    return "group '" + group + "', " + field + ": ";
}

void checkInits(const std::string& group, const VarInitMap& inits) {
    for (const auto& [var, init] : inits) {
        if (!init.hasSnippet()) continue;
        Scope s(
            prefix(group, "initialiser '" + init.snippet().name + "' of variable '" + var + "'"));
        s.snippet(init.snippet());
    }
}

std::string neighbourVar(const VarDecl& v, const NeuronGroup& ng, const std::string& role,
                         const std::string& suffix) {
    return "variable '" + v.name + "' of " + role + " group '" + ng.name() + "'" +
           (suffix.empty() ? "" : " (read as '" + v.name + suffix + "')");
}

// Variables of a neighbouring neuron group, as this scope reads them.
void seeNeuronVars(Scope& s, const NeuronGroup& ng, const std::string& role,
                   const std::string& suffix) {
    for (const auto& v : ng.model().vars)
        s.see(v.name + suffix, neighbourVar(v, ng, role, suffix));
}

// The target neuron group's variables as a postsynaptic model or current source reads them:
// explicitly as `V_post`, and by the bare name `V` where the model has no name `V` of its own
// (its own names come first, as in GeNN's namespaces).
void seeTargetVars(Scope& s, const NeuronGroup& ng) {
    for (const auto& v : ng.model().vars) {
        s.seeUnlessOwn(v.name + "_post", neighbourVar(v, ng, "target", "_post"));
        s.seeUnlessOwn(v.name, neighbourVar(v, ng, "target", ""));
    }
}

void checkNeuronGroup(const NeuronGroup& ng) {
    const auto& m = ng.model();
    Scope s(prefix(ng.name(), "neuron model '" + m.name + "'"));
    s.snippet(m);
    s.vars(m.vars);
    for (const auto& a : m.arrays) {
        s.declare(a.name, "per-neuron array");
        if (a.slots == 0)
            throw ModelError(prefix(ng.name(), "neuron model '" + m.name + "'") +
                             "per-neuron array '" + a.name + "' has 0 slots (at least 1)");
    }
    checkInits(ng.name(), ng.bound().varInits);
    Storage st(ng.name(), {"spkCnt", "spk", "st", "prevSt", "spkBits", "recordSpk"});
    st.stored(m.vars, m.egps, "", m.name);
    for (const auto& a : m.arrays)
        st.add(a.name, "per-neuron array '" + a.name + "' of model '" + m.name + "'");
}

void checkSynapseGroup(const SynapseGroup& sg) {
    const auto& wu = sg.wu().model;
    Scope w(prefix(sg.name(), "weight update model '" + wu.name + "'"));
    w.snippet(wu);
    w.vars(wu.vars);
    w.vars(wu.preVars, "presynaptic variable");
    w.vars(wu.postVars, "postsynaptic variable");
    seeNeuronVars(w, sg.source(), "source", "_pre");
    seeNeuronVars(w, sg.target(), "target", "_post");

    const auto& ps = sg.ps().model;
    Scope p(prefix(sg.name(), "postsynaptic model '" + ps.name + "'"));
    p.snippet(ps);
    p.vars(ps.vars);
    seeTargetVars(p, sg.target());

    if (sg.connectivity()) {
        Scope c(prefix(sg.name(), "connectivity '" + sg.connectivity()->snippet.name + "'"));
        c.snippet(sg.connectivity()->snippet);
    }
    checkInits(sg.name(), sg.wu().varInits);
    checkInits(sg.name(), sg.wuPreVarInits());
    checkInits(sg.name(), sg.wuPostVarInits());
    checkInits(sg.name(), sg.ps().varInits);
    Storage st(sg.name(), {"inSyn",
                           "outPre",
                           "error",
                           "denDelay",
                           "rowLength",
                           "ind",
                           "preCalcRowLength",
                           "colStart",
                           "colSyn",
                           "preEvFlag",
                           "preEvCnt",
                           "preEv",
                           "preEvBits",
                           "preRecordEv",
                           "preSeT",
                           "postEvFlag",
                           "postEvCnt",
                           "postEv",
                           "postEvBits",
                           "postRecordEv",
                           "postSeT"});
    st.stored(wu.vars, wu.egps, "weight update ", wu.name);
    st.stored(wu.preVars, {}, "weight update presynaptic ", wu.name);
    st.stored(wu.postVars, {}, "weight update postsynaptic ", wu.name);
    st.stored(ps.vars, ps.egps, "postsynaptic ", ps.name);
}

void checkCurrentSource(const CurrentSource& cs) {
    const auto& m = cs.bound().model;
    Scope s(prefix(cs.name(), "current source model '" + m.name + "'"));
    s.snippet(m);
    s.vars(m.vars);
    seeTargetVars(s, cs.target());
    checkInits(cs.name(), cs.bound().varInits);
}

void checkCustomUpdate(const CustomUpdate& cu) {
    const auto& m = cu.model();
    Scope s(prefix(cu.name(), "custom update model '" + m.name + "'"));
    s.snippet(m);
    for (const auto& v : m.vars)
        s.declare(v.name, "variable");
    for (const auto& r : m.varRefs)
        s.declare(r.name, "variable reference");
    for (const auto& e : m.egpRefs)
        s.declare(e.name, "extra global parameter reference");
    checkInits(cu.name(), cu.varInits());
}

void checkConnectivityUpdate(const CustomConnectivityUpdate& cc) {
    const auto& m = cc.model();
    Scope s(prefix(cc.name(), "custom connectivity update model '" + m.name + "'"));
    s.snippet(m);
    s.vars(m.vars);
    s.vars(m.preVars);
    s.vars(m.postVars);
    for (const auto& r : m.varRefs)
        s.declare(r.name, "variable reference");
    for (const auto& r : m.preVarRefs)
        s.declare(r.name, "presynaptic variable reference");
    for (const auto& r : m.postVarRefs)
        s.declare(r.name, "postsynaptic variable reference");
    checkInits(cc.name(), cc.varInits());
    checkInits(cc.name(), cc.preVarInits());
    checkInits(cc.name(), cc.postVarInits());
}

} // namespace

void checkModelNames(const Model& model) {
    checkIdentifier(model.name(), "model name");
    for (const auto& ng : model.neuronGroups())
        checkNeuronGroup(*ng);
    for (const auto& sg : model.synapseGroups())
        checkSynapseGroup(*sg);
    for (const auto& cs : model.currentSources())
        checkCurrentSource(*cs);
    for (const auto& cu : model.customUpdates())
        checkCustomUpdate(*cu);
    for (const auto& cc : model.customConnectivityUpdates())
        checkConnectivityUpdate(*cc);
}

} // namespace names

} // namespace spikeforge
