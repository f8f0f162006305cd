#include "backends/common/writer.hpp"

#include "codegen/kernel_plan.hpp"

namespace spikeforge::backends {

void Writer::put(const std::string& text) {
    static const std::string marker =
        std::string("#line ") + codegen::hookName(codegen::Hook::LineResync);
    for (char c : text) {
        if (c != '\n') {
            m_out += c;
            continue;
        }
        if (m_out.size() - m_lineStart == marker.size() &&
            m_out.compare(m_lineStart, marker.size(), marker) == 0)
            m_out.replace(m_lineStart, marker.size(),
                          "#line " + std::to_string(m_line + 1) + " \"" + m_file + "\"");
        m_out += '\n';
        m_lineStart = m_out.size();
        m_line++;
    }
}

} // namespace spikeforge::backends
