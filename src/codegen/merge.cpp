// Group merging: groups whose emitted code and field list are identical share one struct type
// and one code body; fields whose values agree across the set are folded into the code.
#include "codegen/env.hpp"
#include "spikeforge/errors.hpp"

#include <cmath>
#include <cstdio>
#include <map>

namespace spikeforge::codegen {

std::string Env::add(Entry e) {
    for (const auto& existing : m_entries)
        if (existing.decl.name == e.decl.name) {
            if (existing.decl.ctype != e.decl.ctype)
                throw InternalError("field '" + e.decl.name + "' requested with two types");
            return "$(" + e.decl.name + ")";
        }
    m_entries.push_back(std::move(e));
    return "$(" + m_entries.back().decl.name + ")";
}

std::string Env::array(const std::string& field, const std::string& elementType,
                       const std::string& arrayName) {
    FieldBinding b;
    b.kind = FieldBinding::Kind::Array;
    b.array = arrayName;
    return add({{field, elementType + "*"}, b, false});
}

std::string Env::arraySize(const std::string& field, const std::string& arrayName) {
    FieldBinding b;
    b.kind = FieldBinding::Kind::ArraySize;
    b.array = arrayName;
    return add({{field, "uint64_t"}, b, false});
}

std::string Env::number(const std::string& field, const std::string& ctype, double value) {
    FieldBinding b;
    b.number = value;
    return add({{field, ctype}, b, true});
}

std::string Env::param(const std::string& field, const std::string& ctype, double value,
                       const std::string& owner, const std::string& name, bool dynamic) {
    FieldBinding b;
    b.number = value;
    if (dynamic) {
        b.kind = FieldBinding::Kind::Dynamic;
        b.owner = owner;
        b.param = name;
    }
    return add({{field, ctype}, b, !dynamic});
}

std::string literal(double value, const std::string& ctype) {
    char buf[64];
    if (ctype == "float") {
        if (std::isinf(value)) return value > 0 ? "INFINITY" : "(-INFINITY)";
        std::snprintf(buf, sizeof buf, "%.9gf", value);
        std::string s = buf;
        if (s.find_first_of(".en") == std::string::npos) s.insert(s.size() - 1, ".0");
        return "(" + s + ")";
    }
    if (ctype == "double") {
        if (std::isinf(value)) return value > 0 ? "INFINITY" : "(-INFINITY)";
        std::snprintf(buf, sizeof buf, "%.17g", value);
        std::string s = buf;
        if (s.find_first_of(".en") == std::string::npos) s += ".0";
        return "(" + s + ")";
    }
    // Integer types.
    std::snprintf(buf, sizeof buf, "%.0f", value);
    std::string s = buf;
    if (ctype.find("unsigned") != std::string::npos || ctype.rfind("uint", 0) == 0) s += "u";
    if (ctype == "uint64_t" || ctype == "unsigned long long") s += "ll";
    return "(" + s + ")";
}

namespace {

// Comments and #line labels name the group; they say nothing about structure, so two groups
// that differ only there still merge (a compiler error then names the first of them).
std::string structureKey(const EmittedGroup& g) {
    std::string key;
    size_t start = 0;
    while (start < g.code.size()) {
        size_t end = g.code.find('\n', start);
        if (end == std::string::npos) end = g.code.size();
        std::string line = g.code.substr(start, end - start);
        if (line.rfind("#line", 0) == 0) line = "#line";
        if (const size_t c = line.find("// "); c != std::string::npos) line.resize(c);
        key += line + "\n";
        start = end + 1;
    }
    for (const auto& e : g.env.entries())
        key += "\n" + e.decl.name + ":" + e.decl.ctype + (e.foldable ? "" : "!");
    return key;
}

std::string resolvePlaceholders(const std::string& code,
                                const std::map<std::string, std::string>& values) {
    std::string out;
    out.reserve(code.size());
    size_t i = 0;
    while (i < code.size()) {
        if (code[i] == '$' && i + 1 < code.size() && code[i + 1] == '(') {
            const size_t end = code.find(')', i);
            const std::string name = code.substr(i + 2, end - i - 2);
            auto it = values.find(name);
            if (it == values.end()) throw InternalError("unbound field placeholder " + name);
            out += it->second;
            i = end + 1;
        } else {
            out += code[i++];
        }
    }
    return out;
}

} // namespace

MergedPhase mergeGroups(const std::string& prefix, std::vector<EmittedGroup> groups, Precision) {
    std::vector<std::vector<size_t>> sets;
    std::map<std::string, size_t> setOfKey;
    for (size_t i = 0; i < groups.size(); i++) {
        const auto key = structureKey(groups[i]);
        auto [it, inserted] = setOfKey.emplace(key, sets.size());
        if (inserted) sets.emplace_back();
        sets[it->second].push_back(i);
    }
    MergedPhase phase;
    for (size_t s = 0; s < sets.size(); s++) {
        const auto& members = sets[s];
        const auto& first = groups[members.front()];
        MergedGroupTable table;
        table.structName = "Merged" + prefix + std::to_string(s);
        table.symbol = "merged" + prefix + std::to_string(s);
        std::map<std::string, std::string> values;
        std::vector<size_t> kept;
        // Array fields are copied into restrict-qualified locals: the arrays of one kernel never
        // overlap where one of them is written, and telling the compiler so lets it vectorise.
        std::string prologue;
        const auto& entries = first.env.entries();
        for (size_t f = 0; f < entries.size(); f++) {
            bool fold = entries[f].foldable;
            for (size_t m : members)
                fold =
                    fold && groups[m].env.entries()[f].binding.number == entries[f].binding.number;
            if (fold) {
                values[entries[f].decl.name] =
                    literal(entries[f].binding.number, entries[f].decl.ctype);
            } else if (entries[f].binding.kind == FieldBinding::Kind::Array) {
                values[entries[f].decl.name] = "sfp_" + entries[f].decl.name;
                prologue += entries[f].decl.ctype + " __restrict sfp_" + entries[f].decl.name +
                            " = grp->" + entries[f].decl.name + ";\n";
                table.fields.push_back(entries[f].decl);
                kept.push_back(f);
            } else {
                // Numbers are read once per kernel call into locals (dynamic parameters change
                // only between steps).
                values[entries[f].decl.name] = "sfv_" + entries[f].decl.name;
                prologue += "const " + entries[f].decl.ctype + " sfv_" + entries[f].decl.name +
                            " = grp->" + entries[f].decl.name + ";\n";
                table.fields.push_back(entries[f].decl);
                kept.push_back(f);
            }
        }
        for (size_t m : members) {
            table.groupNames.push_back(groups[m].groupName);
            std::vector<FieldBinding> row;
            for (size_t f : kept)
                row.push_back(groups[m].env.entries()[f].binding);
            table.bindings.push_back(std::move(row));
        }
        phase.bodies.push_back(prologue + resolvePlaceholders(first.code, values));
        phase.tables.push_back(std::move(table));
    }
    return phase;
}

} // namespace spikeforge::codegen
