#include "backends/common/device_source.hpp"

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
           "#define rand_binomial(n, p) sf_binomial(&sfRng, (sf_u32)(n), (scalar)(p))\n";
}

} // namespace spikeforge::backends
