#include "config_reader.hpp"

#include "snippet/suggest.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>

namespace spikeforge::cli {

namespace {

std::string positionPrefix(const std::string& file, unsigned line, unsigned column) {
    if (line == 0) return file + ": ";
    if (column == 0) return file + ":" + std::to_string(line) + ": "; // a line-based file (CSV)
    return file + ":" + std::to_string(line) + ":" + std::to_string(column) + ": ";
}

std::string formatNumber(double value) {
    char buffer[32];
    std::snprintf(buffer, sizeof buffer, "%.10g", value);
    return buffer;
}

std::string trim(std::string_view text) {
    const auto space = [](char c) { return c == ' ' || c == '\t'; };
    while (!text.empty() && space(text.front()))
        text.remove_prefix(1);
    while (!text.empty() && space(text.back()))
        text.remove_suffix(1);
    return std::string(text);
}

// Parses a whole string as a finite number ("16000", "-1.5e-3", "+2").
std::optional<double> parseNumber(std::string_view text) {
    if (!text.empty() && text.front() == '+') text.remove_prefix(1);
    double value = 0.0;
    const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (text.empty() || ec != std::errc() || ptr != text.data() + text.size() ||
        !std::isfinite(value))
        return std::nullopt;
    return value;
}

} // namespace

ConfigError::ConfigError(std::string file, unsigned line, unsigned column, const std::string& what)
    : ModelError(positionPrefix(file, line, column) + what), m_file(std::move(file)), m_line(line),
      m_column(column) {}

std::string typeName(const toml::node& node) {
    switch (node.type()) {
    case toml::node_type::string:
        return "a string";
    case toml::node_type::integer:
        return "an integer";
    case toml::node_type::floating_point:
        return "a floating-point number";
    case toml::node_type::boolean:
        return "a boolean";
    case toml::node_type::table:
        return "a table";
    case toml::node_type::array:
        return "an array";
    case toml::node_type::date:
        return "a date";
    case toml::node_type::time:
        return "a time";
    case toml::node_type::date_time:
        return "a date-time";
    case toml::node_type::none:
        break;
    }
    return "nothing";
}

// ---- diagnostics ----------------------------------------------------------------------------

toml::source_position Reader::positionOf(const toml::node& node) {
    const toml::source_position begin = node.source().begin;
    if (begin.line > 0) return begin;
    if (const toml::table* t = node.as_table(); t && !t->empty())
        return t->begin()->first.source().begin;
    if (const toml::array* a = node.as_array(); a && !a->empty()) return positionOf(a->front());
    return {};
}

void Reader::fail(const toml::source_position& at, const std::string& what) const {
    throw ConfigError(m_file, at.line, at.column, what);
}

void Reader::fail(const toml::node& node, const std::string& what) const {
    fail(positionOf(node), what);
}

void Reader::fail(const toml::key& key, const std::string& what) const {
    fail(key.source().begin, what);
}

void Reader::failNoPosition(const std::string& what) const {
    throw ConfigError(m_file, 0, 0, what);
}

// ---- [parameters] ---------------------------------------------------------------------------

void Reader::setParameters(const toml::table* table, const std::vector<std::string>& overrides) {
    if (table) {
        for (auto&& [key, value] : *table) {
            const std::string name(key.str());
            if (!isIdentifier(name))
                fail(key, "parameters: '" + name +
                              "' is not a valid parameter name (letters, digits and '_')");
            if (!value.is_number() && !value.is_string())
                fail(value, "parameters: " + name +
                                ": expected a number or an expression string, got " +
                                typeName(value));
            m_entries[name].node = &value;
        }
    }
    for (const std::string& option : overrides)
        applyOverride(option);
    for (const auto& [name, entry] : m_entries)
        parameterValue(name);
}

void Reader::applyOverride(const std::string& option) {
    const std::size_t eq = option.find('=');
    if (eq == std::string::npos) failNoPosition("--set '" + option + "': expected NAME=VALUE");
    const std::string name = trim(std::string_view(option).substr(0, eq));
    const std::string valueText = trim(std::string_view(option).substr(eq + 1));
    const auto entry = m_entries.find(name);
    if (entry == m_entries.end()) {
        std::vector<std::string> names;
        for (const auto& [known, e] : m_entries)
            names.push_back(known);
        failNoPosition("--set '" + option + "': unknown parameter '" + name + "'" +
                       suggestion(name, names) + "; --set only overrides entries of [parameters]");
    }
    const std::optional<double> value = parseNumber(valueText);
    if (!value) failNoPosition("--set '" + option + "': '" + valueText + "' is not a number");
    entry->second.overrideValue = *value;
}

double Reader::parameterValue(const std::string& name) {
    if (const auto known = m_values.find(name); known != m_values.end()) return known->second;
    ParamEntry& entry = m_entries.at(name);
    double value = 0.0;
    if (entry.overrideValue) {
        value = *entry.overrideValue;
    } else if (const toml::node& node = *entry.node; !node.is_string()) {
        value = number(node, "parameters: " + name);
    } else {
        if (entry.evaluating)
            fail(node, "parameters: " + name +
                           ": circular definition (the expression depends "
                           "on '" +
                           name + "' itself)");
        if (m_depth >= kMaxParameterDepth)
            fail(node, "parameters: " + name + ": definitions refer to one another more than " +
                           std::to_string(kMaxParameterDepth) +
                           " levels deep; write some of them as numbers");
        entry.evaluating = true;
        ++m_depth;
        const NameLookup lookup = [this](const std::string& other) -> std::optional<double> {
            if (!m_entries.count(other)) return std::nullopt;
            return parameterValue(other);
        };
        value = evaluate(node, **node.as_string(), "parameters: " + name, lookup);
        --m_depth;
        entry.evaluating = false;
    }
    m_values[name] = value;
    return value;
}

double Reader::evaluate(const toml::node& node, const std::string& text, const std::string& where,
                        const NameLookup& lookup) const {
    try {
        return evaluateExpression(text, lookup);
    } catch (const ExpressionError& e) {
        std::string what = where + ": bad expression \"" + text + "\": " + e.what() +
                           " at character " + std::to_string(e.position() + 1);
        if (!e.unknownName().empty()) {
            std::vector<std::string> names;
            for (const auto& [name, entry] : m_entries)
                names.push_back(name);
            what += names.empty() ? std::string(" (the config defines no [parameters])")
                                  : suggestion(e.unknownName(), names);
        }
        // Point at the character itself when the string is a plain one-line "..." or '...'.
        const toml::source_region& region = node.source();
        toml::source_position at = positionOf(node);
        if (region.begin.line == region.end.line &&
            region.end.column - region.begin.column == text.size() + 2)
            at.column = static_cast<toml::source_index>(region.begin.column + 1 + e.position());
        fail(at, what);
    }
}

// ---- typed access ---------------------------------------------------------------------------

void Reader::checkKeys(const toml::table& table, const std::string& where,
                       const std::vector<std::string>& allowed) const {
    for (auto&& [key, value] : table) {
        const std::string name(key.str());
        if (std::find(allowed.begin(), allowed.end(), name) == allowed.end())
            fail(key, where + ": unknown key '" + name + "'" + suggestion(name, allowed));
    }
}

const toml::node& Reader::require(const toml::table& table, const std::string& key,
                                  const std::string& where) const {
    const toml::node* node = table.get(key);
    if (!node) fail(table, where + ": missing required key '" + key + "'");
    return *node;
}

double Reader::number(const toml::node& node, const std::string& where) const {
    if (const auto* i = node.as_integer()) return static_cast<double>(i->get());
    if (const auto* f = node.as_floating_point()) {
        if (!std::isfinite(f->get())) fail(node, where + ": expected a finite number");
        return f->get();
    }
    if (const auto* s = node.as_string()) {
        const NameLookup lookup = [this](const std::string& name) -> std::optional<double> {
            const auto it = m_values.find(name);
            if (it == m_values.end()) return std::nullopt;
            return it->second;
        };
        return evaluate(node, s->get(), where, lookup);
    }
    fail(node, where + ": expected a number or an expression string, got " + typeName(node));
}

double Reader::positive(const toml::node& node, const std::string& where) const {
    const double value = number(node, where);
    if (!(value > 0.0)) fail(node, where + ": must be greater than 0, got " + formatNumber(value));
    return value;
}

uint64_t Reader::count(const toml::node& node, const std::string& where, uint64_t min,
                       uint64_t max) const {
    const auto outOfRange = [&](const std::string& got) {
        fail(node, where + ": must be between " + std::to_string(min) + " and " +
                       std::to_string(max) + ", got " + got);
    };
    if (const auto* i = node.as_integer()) { // exact, even beyond 2^53
        const int64_t value = i->get();
        if (value < 0 || static_cast<uint64_t>(value) < min || static_cast<uint64_t>(value) > max)
            outOfRange(std::to_string(value));
        return static_cast<uint64_t>(value);
    }
    const double value = number(node, where);
    const double rounded = std::round(value);
    if (std::abs(value - rounded) > 1e-9 * std::max(1.0, std::abs(value)))
        fail(node, where + ": expected a whole number, got " + formatNumber(value));
    if (rounded < static_cast<double>(min) || rounded > static_cast<double>(max) ||
        rounded >= 0x1p64)
        outOfRange(formatNumber(value));
    return static_cast<uint64_t>(rounded);
}

std::string Reader::string(const toml::node& node, const std::string& where) const {
    if (const auto* s = node.as_string()) return s->get();
    fail(node, where + ": expected a string, got " + typeName(node));
}

std::string Reader::identifier(const toml::node& node, const std::string& where) const {
    std::string name = string(node, where);
    if (!isIdentifier(name))
        fail(node,
             where + ": '" + name +
                 "' is not a valid name (letters, digits and '_', not starting with a digit)");
    return name;
}

bool Reader::boolean(const toml::node& node, const std::string& where) const {
    if (const auto* b = node.as_boolean()) return b->get();
    fail(node, where + ": expected true or false, got " + typeName(node));
}

const toml::table& Reader::table(const toml::node& node, const std::string& where) const {
    if (const auto* t = node.as_table()) return *t;
    fail(node, where + ": expected a table, got " + typeName(node));
}

const toml::array& Reader::array(const toml::node& node, const std::string& where) const {
    if (const auto* a = node.as_array()) return *a;
    fail(node, where + ": expected an array, got " + typeName(node));
}

toml::table parseToml(std::string_view text, const std::string& sourceName) {
    try {
        return toml::parse(text, std::string_view(sourceName));
    } catch (const toml::parse_error& e) {
        const toml::source_position at = e.source().begin;
        throw ConfigError(sourceName, at.line, at.column,
                          "invalid TOML: " + std::string(e.description()));
    }
}

} // namespace spikeforge::cli
