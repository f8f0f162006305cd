#pragma once
// Private to the config loader: typed, position-aware access to a parsed TOML document. Every
// failure is a ConfigError at the offending node.
#include "config.hpp"
#include "expression.hpp"

// toml++ 3.3 asserts (aborts) on some malformed documents, e.g. a table header "[{a]", when
// NDEBUG is not defined; release builds skip those checks and the parser reports a syntax error.
// A malformed config must never crash the CLI, so its internal checks are off in every build.
#ifndef TOML_ASSERT
#define TOML_ASSERT(expr) static_assert(true)
#endif
#if __has_include(<toml++/toml.hpp>)
#include <toml++/toml.hpp>
#else
#include <toml++/toml.h> // Debian/Ubuntu package name
#endif

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace spikeforge::cli {

// Human name of a node's type, with article: "a string", "an integer", …
std::string typeName(const toml::node& node);

// `text` parsed as TOML; a syntax error is a ConfigError at its line and column of `sourceName`.
toml::table parseToml(std::string_view text, const std::string& sourceName);

class Reader {
public:
    explicit Reader(std::string file) : m_file(std::move(file)) {}
    const std::string& file() const { return m_file; }

    // ---- diagnostics ----
    [[noreturn]] void fail(const toml::source_position& at, const std::string& what) const;
    [[noreturn]] void fail(const toml::node& node, const std::string& what) const;
    [[noreturn]] void fail(const toml::key& key, const std::string& what) const;
    [[noreturn]] void failNoPosition(const std::string& what) const;
    // Where a node starts; for a table without its own position, where its first key is.
    static toml::source_position positionOf(const toml::node& node);

    // ---- [parameters] ----
    // Takes the [parameters] table (may be null) and the --set overrides, and evaluates every
    // parameter (values may be expressions over other parameters).
    void setParameters(const toml::table* table, const std::vector<std::string>& overrides);
    const std::map<std::string, double>& parameters() const { return m_values; }

    // ---- typed access; `where` names the key, e.g. "population 'E': size" ----
    // Every key of `table` must be in `allowed`.
    void checkKeys(const toml::table& table, const std::string& where,
                   const std::vector<std::string>& allowed) const;
    const toml::node& require(const toml::table& table, const std::string& key,
                              const std::string& where) const;
    // A number, or a string holding an expression over [parameters].
    double number(const toml::node& node, const std::string& where) const;
    double positive(const toml::node& node, const std::string& where) const;
    // A whole number in [min, max] (a number or an expression).
    uint64_t count(const toml::node& node, const std::string& where, uint64_t min,
                   uint64_t max) const;
    std::string string(const toml::node& node, const std::string& where) const;
    // A string that is a valid C identifier (group, model, parameter and variable names).
    std::string identifier(const toml::node& node, const std::string& where) const;
    bool boolean(const toml::node& node, const std::string& where) const;
    const toml::table& table(const toml::node& node, const std::string& where) const;
    const toml::array& array(const toml::node& node, const std::string& where) const;

    // How deeply parameter definitions may refer to one another. Evaluation recurses once per
    // level; the bound keeps a hostile chain of thousands of definitions off the stack's limit.
    static constexpr unsigned kMaxParameterDepth = 100;

private:
    struct ParamEntry {
        const toml::node* node = nullptr; // null when only set by --set
        std::optional<double> overrideValue;
        bool evaluating = false;
    };
    void applyOverride(const std::string& option);
    double parameterValue(const std::string& name);
    double evaluate(const toml::node& node, const std::string& text, const std::string& where,
                    const NameLookup& lookup) const;

    std::string m_file;
    std::map<std::string, ParamEntry> m_entries;
    std::map<std::string, double> m_values;
    unsigned m_depth = 0; // parameters being evaluated, nested (bounded: see kMaxParameterDepth)
};

} // namespace spikeforge::cli
