// The keys of `info --json` and `simulate --json` are exactly those documented in docs/cli.md.
// The tables are read from the doc (after a "<!-- json-keys: NAME" marker), so a key added to
// the output without a line in the doc, or documented but not produced, fails here.
#include "exe_support.hpp"

#include <gtest/gtest.h>

#include <set>
#include <stdexcept>
#include <vector>

using namespace exe;

namespace {

using Keys = std::vector<std::string>;

// The first column's `key` of every row of the table after the marker, in order.
Keys documentedKeys(const std::string& table) {
    const std::string doc = readFile(std::string(SPIKEFORGE_SOURCE_DIR) + "/docs/cli.md");
    const std::size_t marker = doc.find("<!-- json-keys: " + table + " ");
    if (marker == std::string::npos) throw std::runtime_error("no json-keys marker for " + table);
    std::istringstream lines(doc.substr(doc.find('\n', marker) + 1));
    Keys keys;
    std::string line;
    int row = 0;
    while (std::getline(lines, line) && !line.empty() && line.front() == '|') {
        if (row++ < 2) continue; // header and separator
        const std::size_t open = line.find('`');
        const std::size_t close = line.find('`', open + 1);
        const std::size_t cellEnd = line.find('|', 1);
        if (open == std::string::npos || close == std::string::npos || close > cellEnd)
            throw std::runtime_error("docs/cli.md: a row without a `key`: " + line);
        keys.push_back(line.substr(open + 1, close - open - 1));
    }
    return keys;
}

// Just enough of a JSON reader to list key paths: the keys of the top-level object in order,
// and "key[].sub" for the keys of objects inside a top-level array. Nested objects' own keys
// (population names in rates_hz) are not listed. Throws on malformed JSON.
class KeyLister {
public:
    explicit KeyLister(std::string text) : m_text(std::move(text)) {}

    Keys topLevel() {
        Keys keys;
        object("", 0, keys);
        skipSpace();
        if (m_at != m_text.size()) fail("text after the object");
        return keys;
    }

private:
    void fail(const std::string& what) const {
        throw std::runtime_error("bad JSON at " + std::to_string(m_at) + ": " + what);
    }
    void skipSpace() {
        while (m_at < m_text.size() && std::isspace(static_cast<unsigned char>(m_text[m_at])))
            ++m_at;
    }
    void expect(char c) {
        skipSpace();
        if (m_at >= m_text.size() || m_text[m_at] != c) fail(std::string("expected ") + c);
        ++m_at;
    }
    bool peek(char c) {
        skipSpace();
        return m_at < m_text.size() && m_text[m_at] == c;
    }
    std::string string() {
        expect('"');
        std::string out;
        while (m_at < m_text.size() && m_text[m_at] != '"') {
            if (m_text[m_at] == '\\') ++m_at;
            out += m_text[m_at++];
        }
        expect('"');
        return out;
    }
    // depth 0: the top-level object; depth 1: an object inside a top-level array.
    void object(const std::string& prefix, int depth, Keys& keys) {
        expect('{');
        if (peek('}')) {
            ++m_at;
            return;
        }
        do {
            const std::string key = string();
            if (depth <= 1) keys.push_back(prefix + key);
            expect(':');
            value(key, depth, keys);
        } while (peek(',') && ++m_at);
        expect('}');
    }
    void value(const std::string& key, int depth, Keys& keys) {
        Keys ignored;
        if (peek('{')) return object("", 2, ignored);
        if (peek('[')) {
            ++m_at;
            if (peek(']')) {
                ++m_at;
                return;
            }
            do {
                if (depth == 0 && peek('{')) {
                    Keys inner;
                    object(key + "[].", 1, inner);
                    for (const std::string& k : inner)
                        if (!m_seen.count(k)) m_seen.insert(k), keys.push_back(k);
                } else {
                    value(key, 2, ignored);
                }
            } while (peek(',') && ++m_at);
            return expect(']');
        }
        if (peek('"')) return static_cast<void>(string());
        const std::size_t start = m_at;
        while (m_at < m_text.size() &&
               std::string_view("+-.0123456789eEtrufalsn").find(m_text[m_at]) !=
                   std::string_view::npos)
            ++m_at;
        if (m_at == start) fail("expected a value");
    }

    std::string m_text;
    std::size_t m_at = 0;
    std::set<std::string> m_seen;
};

Keys keysOf(const std::string& json) {
    return KeyLister(json).topLevel();
}

} // namespace

TEST(CliJson, ListerSeesEveryKeyAndRejectsMalformedJson) {
    EXPECT_EQ(keysOf(R"({"a": 1, "b": {"x": [1, 2]}, "c": [{"d": true, "e": "}"}, {"d": null}]})"),
              (Keys{"a", "b", "c", "c[].d", "c[].e"}));
    EXPECT_THROW(keysOf(R"({"a": 1)"), std::runtime_error);
    EXPECT_THROW(keysOf(R"({"a": 1} x)"), std::runtime_error);
}

TEST(CliJson, InfoKeysAreTheDocumentedOnes) {
    const Result r = run("info --json");
    ASSERT_EQ(r.exitCode, 0) << r.err;
    EXPECT_EQ(keysOf(lastLine(r.out)), documentedKeys("info")) << lastLine(r.out);
}

// Needs the cpu backend and a C++ compiler: a real build and run.
TEST(CliJson, SimulateKeysAreTheDocumentedOnesInOrder) {
    const fs::path config = writeConfig(tinyConfig);
    const Result r = run("simulate " + quoted(config) + " --json");
    fs::remove(config);
    ASSERT_EQ(r.exitCode, 0) << r.err;
    const Keys documented = documentedKeys("simulate");
    EXPECT_GE(documented.size(), 15u); // the doc table was found and read whole
    EXPECT_EQ(keysOf(lastLine(r.out)), documented) << lastLine(r.out);
}
