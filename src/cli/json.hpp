#pragma once
// Just enough JSON output for `--json`: strings, numbers, booleans and nested objects, written
// on one line. No dependency.
#include <cstdint>
#include <string>
#include <string_view>

namespace spikeforge::cli {

// A quoted, escaped JSON string literal.
std::string jsonString(std::string_view text);
// A JSON number; NaN and infinities (not representable in JSON) become null.
std::string jsonNumber(double value);

// Builds {"key": value, …} in insertion order. Distinct method names avoid the classic trap of
// a string literal silently converting to bool.
class JsonObject {
public:
    JsonObject& addString(std::string_view key, std::string_view value);
    JsonObject& addNumber(std::string_view key, double value);
    JsonObject& addInteger(std::string_view key, uint64_t value);
    JsonObject& addBool(std::string_view key, bool value);
    JsonObject& addObject(std::string_view key, const JsonObject& value);
    JsonObject& addRaw(std::string_view key, std::string_view json); // already valid JSON
    std::string str() const { return "{" + m_body + "}"; }

private:
    std::string m_body;
};

} // namespace spikeforge::cli
