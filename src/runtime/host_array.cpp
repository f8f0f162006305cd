#include "runtime/host_array.hpp"

namespace spikeforge::runtime {

namespace {
template <typename T> void put(unsigned char* dst, double v) {
    const T x = static_cast<T>(v);
    std::memcpy(dst, &x, sizeof x);
}
template <typename T> double get(const unsigned char* src) {
    T x;
    std::memcpy(&x, src, sizeof x);
    return static_cast<double>(x);
}
} // namespace

void storeNumber(unsigned char* dst, const std::string& t, double v) {
    if (t == "float")
        put<float>(dst, v);
    else if (t == "double")
        put<double>(dst, v);
    else if (t == "uint32_t" || t == "unsigned int")
        put<uint32_t>(dst, v);
    else if (t == "int32_t" || t == "int")
        put<int32_t>(dst, v);
    else if (t == "uint64_t")
        put<uint64_t>(dst, v);
    else if (t == "int64_t")
        put<int64_t>(dst, v);
    else if (t == "uint16_t")
        put<uint16_t>(dst, v);
    else if (t == "int16_t")
        put<int16_t>(dst, v);
    else if (t == "uint8_t" || t == "bool")
        put<uint8_t>(dst, v);
    else if (t == "int8_t")
        put<int8_t>(dst, v);
    else
        throw InternalError("cannot store a number as " + t);
}

double loadNumber(const unsigned char* src, const std::string& t) {
    if (t == "float") return get<float>(src);
    if (t == "double") return get<double>(src);
    if (t == "uint32_t" || t == "unsigned int") return get<uint32_t>(src);
    if (t == "int32_t" || t == "int") return get<int32_t>(src);
    if (t == "uint64_t") return get<uint64_t>(src);
    if (t == "int64_t") return get<int64_t>(src);
    if (t == "uint16_t") return get<uint16_t>(src);
    if (t == "int16_t") return get<int16_t>(src);
    if (t == "uint8_t" || t == "bool") return get<uint8_t>(src);
    if (t == "int8_t") return get<int8_t>(src);
    throw InternalError("cannot load a number of type " + t);
}

} // namespace spikeforge::runtime
