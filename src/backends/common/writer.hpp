#pragma once
// The line-counting writer every backend's printer appends generated text through.
#include <string>

namespace spikeforge::backends {

// Appends generated text, counting lines: a `#line SF_RESYNC` line (after a snippet, whose
// #line labels point at the user's code) becomes `#line <next> "<file>"`, so diagnostics of
// generated code point back at the generated file.
class Writer {
public:
    explicit Writer(std::string file) : m_file(std::move(file)) {}
    void put(const std::string& text);
    Writer& operator<<(const std::string& text) {
        put(text);
        return *this;
    }
    const std::string& str() const { return m_out; }

private:
    std::string m_file;
    std::string m_out;
    size_t m_lineStart = 0; // offset of the line being written
    size_t m_line = 1;      // its number
};

} // namespace spikeforge::backends
