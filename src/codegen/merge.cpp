// Group merging: groups whose lowered bodies (every fragment, exactly) and field lists are
// identical share one struct type and one body; fields whose values agree across the set are
// folded into the code.
#include "codegen/env.hpp"
#include "spikeforge/errors.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>

namespace spikeforge::codegen {

std::string Env::add(Entry e) {
    for (auto& existing : m_entries)
        if (existing.decl.name == e.decl.name) {
            if (existing.decl.ctype != e.decl.ctype)
                throw InternalError("field '" + e.decl.name + "' requested with two types");
            existing.read = existing.read || e.read;
            existing.written = existing.written || e.written;
            return "$(" + e.decl.name + ")";
        }
    m_entries.push_back(std::move(e));
    return "$(" + m_entries.back().decl.name + ")";
}

std::string Env::array(const std::string& field, const std::string& elementType,
                       const std::string& arrayName, Use use) {
    FieldBinding b;
    b.kind = FieldBinding::Kind::Array;
    b.array = arrayName;
    return add({{field, elementType + "*"}, b, false, use != Use::Write, use != Use::Read});
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

namespace {

// A float (9 significant digits) or double (17) literal, with a decimal point where printf gave
// none, so it is never read as an integer.
std::string floatingLiteral(double value, bool single) {
    if (std::isinf(value)) return value > 0 ? "INFINITY" : "(-INFINITY)";
    char buf[64];
    std::snprintf(buf, sizeof buf, single ? "%.9g" : "%.17g", value);
    std::string s = buf;
    if (s.find_first_of(".en") == std::string::npos) s += ".0";
    return "(" + s + (single ? "f" : "") + ")";
}

std::string integerLiteral(double value, const char* suffix) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.0f", value);
    return "(" + std::string(buf) + suffix + ")";
}

} // namespace

std::string literal(double value, const std::string& ctype) {
    switch (cTypeOf(ctype)) {
    case CType::Float:
        return floatingLiteral(value, true);
    case CType::Double:
        return floatingLiteral(value, false);
    case CType::UInt64:
        return integerLiteral(value, "ull");
    case CType::UInt8:
    case CType::UInt16:
    case CType::UInt32:
        return integerLiteral(value, "u");
    case CType::Bool:
    case CType::Int8:
    case CType::Int16:
    case CType::Int32:
    case CType::Int64:
        return integerLiteral(value, "");
    case CType::Pointer:
        break;
    }
    throw InternalError("no literal of pointer type " + ctype);
}

namespace {

// The merge key: the body's structure, every fragment (length-prefixed, so no two bodies share
// a key by accident) and the field list. Labels are placeholders, so they are not part of it.
std::string mergeKey(LoweredGroup& g) {
    std::string key = structureOf(g.body);
    for (const std::string* f : fragmentsOf(g.body))
        key += "|" + std::to_string(f->size()) + ":" + *f;
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
            if (end == std::string::npos) throw InternalError("unterminated field placeholder");
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

// Resolves one set: folded fields become literals, the others struct fields read into locals.
MergedSet mergeSet(const std::string& prefix, size_t index, std::vector<LoweredGroup>& groups,
                   const std::vector<size_t>& members) {
    auto& first = groups[members.front()];
    MergedSet set;
    set.table.structName = "Merged" + prefix + std::to_string(index);
    set.table.symbol = "merged" + prefix + std::to_string(index);
    std::map<std::string, std::string> values;
    for (size_t k = 0; k < first.labels.size(); k++)
        values["@L" + std::to_string(k)] = first.labels[k];
    std::vector<size_t> kept;
    const auto& entries = first.env.entries();
    for (size_t f = 0; f < entries.size(); f++) {
        bool fold = entries[f].foldable;
        for (size_t m : members)
            fold = fold && groups[m].env.entries()[f].binding.number == entries[f].binding.number;
        const auto& decl = entries[f].decl;
        if (fold) {
            values[decl.name] = literal(entries[f].binding.number, decl.ctype);
            continue;
        }
        const bool isArray = entries[f].binding.kind == FieldBinding::Kind::Array;
        values[decl.name] = (isArray ? "sfp_" : "sfv_") + decl.name;
        set.table.fields.push_back(decl);
        kept.push_back(f);
    }
    std::set<std::string> read, written;
    for (size_t m : members) {
        set.table.groupNames.push_back(groups[m].groupName);
        set.elements.push_back(groups[m].elements);
        set.synapses.push_back(groups[m].synapses);
        std::vector<FieldBinding> row;
        for (size_t f : kept)
            row.push_back(groups[m].env.entries()[f].binding);
        set.table.bindings.push_back(std::move(row));
        for (const auto& e : groups[m].env.entries()) {
            if (e.binding.kind != FieldBinding::Kind::Array) continue;
            if (e.read) read.insert(e.binding.array);
            if (e.written) written.insert(e.binding.array);
        }
    }
    set.read.assign(read.begin(), read.end());
    set.written.assign(written.begin(), written.end());
    set.body = std::move(first.body);
    for (std::string* f : fragmentsOf(set.body))
        *f = resolvePlaceholders(*f, values);
    return set;
}

} // namespace

std::vector<MergedSet> mergeGroups(const std::string& prefix, std::vector<LoweredGroup> groups) {
    std::vector<std::vector<size_t>> sets;
    std::map<std::string, size_t> setOfKey;
    for (size_t i = 0; i < groups.size(); i++) {
        auto [it, inserted] = setOfKey.emplace(mergeKey(groups[i]), sets.size());
        if (inserted) sets.emplace_back();
        sets[it->second].push_back(i);
    }
    std::vector<MergedSet> out;
    for (size_t s = 0; s < sets.size(); s++)
        out.push_back(mergeSet(prefix, s, groups, sets[s]));
    return out;
}

} // namespace spikeforge::codegen
