#include "backends/common/device_source.hpp"

#include "codegen/abi.hpp"

namespace spikeforge::embedded {
extern const char* const embeddedRngSource;
}

namespace spikeforge::backends {

std::string randomNumberSource() {
    return std::string(embedded::embeddedRngSource) +
           "\n#define rand_uniform() sf_uniform(&sfRng)\n"
           "#define rand_normal() sf_normal(&sfRng)\n"
           "#define rand_exponential() sf_exponential(&sfRng)\n"
           "#define rand_gamma(a) sf_gamma(&sfRng, (scalar)(a))\n"
           // n may be a floating value: converted as a snippet's casts are.
           "#define rand_binomial(n, p) sf_binomial(&sfRng, sf_f64_to_u32((double)(n), 32u), "
           "(scalar)(p))\n"
           // exp(m + s·N(0, 1)): GeNN's gennrand_log_normal(mean, sd) of the underlying normal.
           "#define rand_log_normal(m, s) exp((scalar)(m) + (scalar)(s) * sf_normal(&sfRng))\n";
}

namespace {

struct IntegerType {
    const char* suffix;
    const char* ctype;
    const char* minimum; // the C spelling of its minimum, or null for an unsigned type
};

// The minimum is spelled as an expression: `-2147483648` is the negation of a literal that
// does not fit an int.
constexpr IntegerType kPromotedTypes[] = {
    {"i32", "int32_t", "(-2147483647 - 1)"},
    {"u32", "uint32_t", nullptr},
    {"i64", "int64_t", "(-(int64_t)9223372036854775807 - (int64_t)1)"},
    {"u64", "uint64_t", nullptr},
};

std::string divisionHelpers(const IntegerType& t, const std::string& errorPointer,
                            const std::string& store) {
    const std::string ct = t.ctype, head = "SF_FN " + ct + " sf_";
    const std::string params =
        "(" + ct + " a, " + ct + " b, " + errorPointer + " err, uint32_t code) {\n";
    const std::string zero =
        "    if (b == 0) {\n        " + store + "(err, code);\n        return 0;\n    }\n";
    std::string s = head + "div_" + t.suffix + params + zero;
    if (t.minimum)
        s += "    if (b == -1 && a == " + std::string(t.minimum) + ") {\n        " + store +
             "(err, code | " + std::to_string(codegen::abi::kDivisionOverflowBit) +
             "u);\n        return 0;\n    }\n";
    s += "    return a / b;\n}\n";
    s += head + "rem_" + t.suffix + params + zero;
    // The remainder of the minimum by -1 is 0, but computing it traps like the division.
    if (t.minimum) s += "    if (b == -1) return 0;\n";
    s += "    return a % b;\n}\n";
    return s;
}

// sf_<f>_to_<t>(x, w): x converted to the w-bit integer type of t's signedness (w <= t's
// width), saturating at its bounds and NaN to 0. The bounds are computed in the integer type
// (all ones, shifted right) and converted: max + 1 is 2^k exactly in every floating type (it
// is exact, or max rounds up to it). NaN compares unequal to itself (fast-math builds keep NaNs:
// -fno-finite-math-only on the cpu; CUDA's --use_fast_math does not assume finite values).
std::string saturatingConversion(const std::string& f, const IntegerType& t) {
    const std::string ft = f == "f32" ? "float" : "double", it = t.ctype;
    const std::string ut = it[0] == 'u' ? it : "u" + it;
    const int bits = t.suffix[1] == '3' ? 32 : 64;
    const bool isSigned = t.minimum != nullptr;
    std::string s = "SF_FN " + it + " sf_" + f + "_to_" + t.suffix + "(" + ft +
                    " x, uint32_t w) {\n    const " + it + " max = (" + it + ")(~(" + ut +
                    ")0 >> (" + std::to_string(bits) + "u - w" + (isSigned ? " + 1u" : "") +
                    "));\n    const " + ft + " bound = (" + ft + ")max + (" + ft +
                    ")1;\n    if (x != x) return 0;\n    if (x >= bound) return max;\n";
    s += isSigned ? "    if (x < -bound) return -max - 1;\n"
                  : "    if (x <= (" + ft + ")-1) return 0;\n";
    s += "    return (" + it + ")x;\n}\n";
    return s;
}

} // namespace

std::string snippetCheckSource(const std::string& errorPointer, const std::string& store) {
    std::string s = "SF_FN uint64_t sf_index(int64_t i, uint64_t n, " + errorPointer +
                    " err, uint32_t code) {\n"
                    "    if (i >= 0 && (uint64_t)i < n) return (uint64_t)i;\n    " +
                    store + "(err, code);\n    return 0;\n}\n";
    for (const IntegerType& t : kPromotedTypes)
        s += divisionHelpers(t, errorPointer, store);
    for (const char* f : {"f32", "f64"})
        for (const IntegerType& t : kPromotedTypes)
            s += saturatingConversion(f, t);
    return s;
}

} // namespace spikeforge::backends
