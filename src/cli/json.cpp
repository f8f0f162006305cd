#include "json.hpp"

#include <cmath>
#include <cstdio>

namespace spikeforge::cli {

std::string jsonString(std::string_view text) {
    std::string out = "\"";
    for (const char c : text) {
        switch (c) {
        case '"':
            out += "\\\"";
            break;
        case '\\':
            out += "\\\\";
            break;
        case '\b':
            out += "\\b";
            break;
        case '\f':
            out += "\\f";
            break;
        case '\n':
            out += "\\n";
            break;
        case '\r':
            out += "\\r";
            break;
        case '\t':
            out += "\\t";
            break;
        default:
            if (static_cast<unsigned char>(c) < 0x20) {
                char escaped[8];
                std::snprintf(escaped, sizeof escaped, "\\u%04x", static_cast<unsigned>(c));
                out += escaped;
            } else {
                out += c; // UTF-8 bytes pass through unchanged
            }
        }
    }
    return out + "\"";
}

std::string jsonNumber(double value) {
    if (!std::isfinite(value)) return "null";
    char buffer[32];
    std::snprintf(buffer, sizeof buffer, "%.12g", value);
    return buffer;
}

JsonObject& JsonObject::addRaw(std::string_view key, std::string_view json) {
    if (!m_body.empty()) m_body += ", ";
    m_body += jsonString(key);
    m_body += ": ";
    m_body += json;
    return *this;
}

JsonObject& JsonObject::addString(std::string_view key, std::string_view value) {
    return addRaw(key, jsonString(value));
}

JsonObject& JsonObject::addNumber(std::string_view key, double value) {
    return addRaw(key, jsonNumber(value));
}

JsonObject& JsonObject::addInteger(std::string_view key, uint64_t value) {
    return addRaw(key, std::to_string(value));
}

JsonObject& JsonObject::addBool(std::string_view key, bool value) {
    return addRaw(key, value ? "true" : "false");
}

JsonObject& JsonObject::addObject(std::string_view key, const JsonObject& value) {
    return addRaw(key, value.str());
}

} // namespace spikeforge::cli
