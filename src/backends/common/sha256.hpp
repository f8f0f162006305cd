#pragma once
// SHA-256 (FIPS 180-4), used for the compile-cache key: a collision would load the wrong model's
// library or program binary, so the key needs a cryptographic hash, not FNV.
#include <cstdint>
#include <string>
#include <string_view>

namespace spikeforge::backends {

class Sha256 {
public:
    Sha256();
    void update(std::string_view data);
    // Adds a length-prefixed field, so that ("ab","c") and ("a","bc") hash differently.
    void field(std::string_view data);
    std::string hexDigest(); // finishes the hash; the object must not be updated afterwards

private:
    void block(const unsigned char* p);
    uint32_t m_h[8];
    unsigned char m_buf[64];
    size_t m_used = 0;
    uint64_t m_bytes = 0;
};

std::string sha256Hex(std::string_view data);

} // namespace spikeforge::backends
