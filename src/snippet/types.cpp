// Types and the one table of callable functions of the snippet language.
#include "snippet/parser.hpp"

#include <array>
#include <string_view>
#include <utility>
#include <vector>

namespace spikeforge::snippet {

namespace {

using R = FunctionInfo::Returns;

// Every function a snippet may call. Built-ins are callable only where the context declares
// them (addToPost only in presynaptic code, …); maths functions everywhere. The maths functions
// are those C99, C++ (<math.h>), CUDA and OpenCL C all provide with these arities.
constexpr std::array kFunctions = {
    FunctionInfo{"rand_uniform", 0, R::Scalar, 0, false, true},
    FunctionInfo{"rand_normal", 0, R::Scalar, 0, false, true},
    FunctionInfo{"rand_exponential", 0, R::Scalar, 0, false, true},
    FunctionInfo{"rand_gamma", 1, R::Scalar, 0, false, true},
    FunctionInfo{"rand_binomial", 2, R::U32, 0, false, true},
    FunctionInfo{"rand_log_normal", 2, R::Scalar, 0, false, true},
    FunctionInfo{"addToPost", 1, R::Void, 0, false, false},
    FunctionInfo{"addToPostDelay", 2, R::Void, 2, false, false},
    FunctionInfo{"addToPre", 1, R::Void, 0, false, false},
    FunctionInfo{"injectCurrent", 1, R::Void, 0, false, false},
    FunctionInfo{"addSynapse", 1, R::Void, 1, false, false},
    FunctionInfo{"add_synapse", 1, R::Void, 1, false, false}, // arity: Context::arities
    FunctionInfo{"remove_synapse", 0, R::Void, 0, false, false},
    FunctionInfo{"exp", 1, R::Floating, 0, true, false},
    FunctionInfo{"exp2", 1, R::Floating, 0, true, false},
    FunctionInfo{"expm1", 1, R::Floating, 0, true, false},
    FunctionInfo{"log", 1, R::Floating, 0, true, false},
    FunctionInfo{"log2", 1, R::Floating, 0, true, false},
    FunctionInfo{"log10", 1, R::Floating, 0, true, false},
    FunctionInfo{"log1p", 1, R::Floating, 0, true, false},
    FunctionInfo{"pow", 2, R::Floating, 0, true, false},
    FunctionInfo{"sqrt", 1, R::Floating, 0, true, false},
    FunctionInfo{"cbrt", 1, R::Floating, 0, true, false},
    FunctionInfo{"sin", 1, R::Floating, 0, true, false},
    FunctionInfo{"cos", 1, R::Floating, 0, true, false},
    FunctionInfo{"tan", 1, R::Floating, 0, true, false},
    FunctionInfo{"asin", 1, R::Floating, 0, true, false},
    FunctionInfo{"acos", 1, R::Floating, 0, true, false},
    FunctionInfo{"atan", 1, R::Floating, 0, true, false},
    FunctionInfo{"atan2", 2, R::Floating, 0, true, false},
    FunctionInfo{"sinh", 1, R::Floating, 0, true, false},
    FunctionInfo{"cosh", 1, R::Floating, 0, true, false},
    FunctionInfo{"tanh", 1, R::Floating, 0, true, false},
    FunctionInfo{"asinh", 1, R::Floating, 0, true, false},
    FunctionInfo{"acosh", 1, R::Floating, 0, true, false},
    FunctionInfo{"atanh", 1, R::Floating, 0, true, false},
    FunctionInfo{"fabs", 1, R::Floating, 0, true, false},
    FunctionInfo{"fmin", 2, R::Floating, 0, true, false},
    FunctionInfo{"fmax", 2, R::Floating, 0, true, false},
    FunctionInfo{"fmod", 2, R::Floating, 0, true, false},
    FunctionInfo{"floor", 1, R::Floating, 0, true, false},
    FunctionInfo{"ceil", 1, R::Floating, 0, true, false},
    FunctionInfo{"round", 1, R::Floating, 0, true, false},
    FunctionInfo{"trunc", 1, R::Floating, 0, true, false},
    FunctionInfo{"rint", 1, R::Floating, 0, true, false},
    FunctionInfo{"copysign", 2, R::Floating, 0, true, false},
    FunctionInfo{"hypot", 2, R::Floating, 0, true, false},
    FunctionInfo{"erf", 1, R::Floating, 0, true, false},
    FunctionInfo{"erfc", 1, R::Floating, 0, true, false},
    FunctionInfo{"tgamma", 1, R::Floating, 0, true, false},
    FunctionInfo{"lgamma", 1, R::Floating, 0, true, false},
    FunctionInfo{"fma", 3, R::Floating, 0, true, false},
    FunctionInfo{"isnan", 1, R::Bool, 0, true, false},
    FunctionInfo{"isinf", 1, R::Bool, 0, true, false},
    FunctionInfo{"abs", 1, R::SameAsArg, 0, true, false},
};

// GeNN's spellings of the random functions, so that PyGeNN code strings run unchanged: a call
// through one is checked and printed as a call of the function it names.
constexpr std::array<std::pair<std::string_view, std::string_view>, 6> kGeNNSpellings = {{
    {"gennrand_uniform", "rand_uniform"},
    {"gennrand_normal", "rand_normal"},
    {"gennrand_exponential", "rand_exponential"},
    {"gennrand_gamma", "rand_gamma"},
    {"gennrand_binomial", "rand_binomial"},
    {"gennrand_log_normal", "rand_log_normal"},
}};

} // namespace

const FunctionInfo* functionInfo(const std::string& name) {
    for (const auto& f : kFunctions)
        if (name == f.name) return &f;
    for (const auto& [spelling, function] : kGeNNSpellings)
        if (name == spelling) return functionInfo(std::string(function));
    return nullptr;
}

const std::vector<std::string>& randomFunctions() {
    static const std::vector<std::string> names = [] {
        std::vector<std::string> v;
        for (const auto& f : kFunctions)
            if (f.rng) v.push_back(f.name);
        return v;
    }();
    return names;
}

const std::set<std::string>& mathFunctions() {
    static const std::set<std::string> names = [] {
        std::set<std::string> s;
        for (const auto& f : kFunctions)
            if (f.maths) s.insert(f.name);
        return s;
    }();
    return names;
}

std::string typeName(Type t, Precision precision) {
    switch (t) {
    case Type::Void:
        return "void";
    case Type::Bool:
        return "bool";
    case Type::I8:
        return "int8_t";
    case Type::U8:
        return "uint8_t";
    case Type::I16:
        return "int16_t";
    case Type::U16:
        return "uint16_t";
    case Type::I32:
        return "int32_t";
    case Type::U32:
        return "uint32_t";
    case Type::I64:
        return "int64_t";
    case Type::U64:
        return "uint64_t";
    case Type::F32:
        return "float";
    case Type::F64:
        return "double";
    case Type::Scalar:
        return precision == Precision::Float ? "float" : "double";
    }
    throw InternalError("snippet: unknown type");
}

Type parseTypeName(const std::string& name, const std::string& what) {
    static const std::map<std::string, Type> types = {
        {"scalar", Type::Scalar},    {"float", Type::F32},    {"double", Type::F64},
        {"bool", Type::Bool},        {"int", Type::I32},      {"signed int", Type::I32},
        {"unsigned int", Type::U32}, {"unsigned", Type::U32}, {"int8_t", Type::I8},
        {"uint8_t", Type::U8},       {"int16_t", Type::I16},  {"uint16_t", Type::U16},
        {"int32_t", Type::I32},      {"uint32_t", Type::U32}, {"int64_t", Type::I64},
        {"uint64_t", Type::U64}};
    const auto it = types.find(name);
    if (it == types.end())
        throw ModelError(what + ": type '" + name +
                         "' is not a snippet type (scalar, float, double, bool, int, unsigned "
                         "int or a fixed-width integer type such as uint32_t)");
    return it->second;
}

namespace detail {

bool isInteger(Type t) {
    return t != Type::Void && t != Type::F32 && t != Type::F64 && t != Type::Scalar;
}

bool isFloating(Type t) {
    return t == Type::F32 || t == Type::F64 || t == Type::Scalar;
}

bool isUnsigned(Type t) {
    return t == Type::Bool || t == Type::U8 || t == Type::U16 || t == Type::U32 || t == Type::U64;
}

int bitWidth(Type t) {
    switch (t) {
    case Type::Void:
        return 0;
    case Type::Bool:
        return 1;
    case Type::I8:
    case Type::U8:
        return 8;
    case Type::I16:
    case Type::U16:
        return 16;
    case Type::I32:
    case Type::U32:
    case Type::F32:
        return 32;
    case Type::I64:
    case Type::U64:
    case Type::F64:
    case Type::Scalar:
        return 64;
    }
    return 0;
}

} // namespace detail

} // namespace spikeforge::snippet
