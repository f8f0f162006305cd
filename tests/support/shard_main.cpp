// main() of spikeforge_tests: GoogleTest's, plus shards by source file.
//
// With SPIKEFORGE_TEST_SHARD=i/n in the environment (ctest sets it, CMakeLists.txt), this process
// runs shard i of n, where a shard is a set of whole test files: every case of one file runs in
// one process. GoogleTest's own sharding (GTEST_TOTAL_SHARDS) deals out case k to shard k mod n,
// which spreads the cases of a file over every process, so whatever a file computes once per
// process and shares between its cases (the microcircuit run per backend that three tests and
// the cross-backend test read) was computed in every shard. Files go to shards by the longest
// processing time rule on an estimated cost, so the shards come out about even. The cases are
// those that --gtest_filter selects (GoogleTest's pattern syntax), split the same way, so
// tools/run-tests --quick FILTER shards a topic as ctest shards the whole binary.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <stdlib.h> // unsetenv
#include <string>
#include <string_view>
#include <vector>

namespace {

// GoogleTest's wildcard match: '*' any string, '?' any one character.
bool globMatches(std::string_view pattern, std::string_view name) {
    size_t p = 0, n = 0, star = std::string_view::npos, resume = 0;
    while (n < name.size()) {
        if (p < pattern.size() && (pattern[p] == '?' || pattern[p] == name[n])) {
            ++p;
            ++n;
        } else if (p < pattern.size() && pattern[p] == '*') {
            star = p++;
            resume = n;
        } else if (star != std::string_view::npos) {
            p = star + 1;
            n = ++resume;
        } else {
            return false;
        }
    }
    while (p < pattern.size() && pattern[p] == '*')
        ++p;
    return p == pattern.size();
}

bool anyMatches(std::string_view patterns, std::string_view name) {
    while (true) {
        const size_t colon = patterns.find(':');
        if (globMatches(patterns.substr(0, colon), name)) return true;
        if (colon == std::string_view::npos) return false;
        patterns.remove_prefix(colon + 1);
    }
}

// GoogleTest's filter: POSITIVE[-NEGATIVE], each a ':'-separated list of patterns; an empty
// positive part selects everything.
bool filterSelects(const std::string& filter, const std::string& name) {
    const size_t dash = filter.find('-');
    const std::string positive = filter.substr(0, dash);
    const std::string negative = dash == std::string::npos ? "" : filter.substr(dash + 1);
    if (!positive.empty() && !anyMatches(positive, name)) return false;
    return negative.empty() || !anyMatches(negative, name);
}

struct FileGroup {
    std::string file;
    double cost = 0.0;
    std::vector<std::string> tests;
};

// A parameterised case builds and runs a model on a backend; a plain case mostly checks the
// library in memory: on average 1.8 s and 0.85 s of the 2-core VM's time (fifteenth session's
// profile). A rough weight: with 16 shards the longest file (the block-sparse tests, 124 s)
// sets how even they come out, not the estimate.
constexpr double kBackendCaseCost = 2.0;
constexpr double kPlainCaseCost = 1.0;

// The filter that runs only this shard's cases, or "" when the environment asks for no shards.
std::string shardFilter(const char* spec) {
    unsigned index = 0, count = 0;
    char end = 0;
    if (std::sscanf(spec, "%u/%u%c", &index, &count, &end) != 2 || count == 0 || index >= count) {
        std::fprintf(stderr, "SPIKEFORGE_TEST_SHARD is '%s'; it must be i/n with 0 <= i < n\n",
                     spec);
        std::exit(2);
    }
    const std::string userFilter = GTEST_FLAG_GET(filter);
    std::map<std::string, FileGroup> byFile;
    const auto& unit = *::testing::UnitTest::GetInstance();
    for (int s = 0; s < unit.total_test_suite_count(); ++s) {
        const auto& suite = *unit.GetTestSuite(s);
        for (int t = 0; t < suite.total_test_count(); ++t) {
            const auto& info = *suite.GetTestInfo(t);
            const std::string name = std::string(suite.name()) + "." + info.name();
            if (!filterSelects(userFilter, name)) continue;
            FileGroup& g = byFile[info.file()];
            g.file = info.file();
            g.cost += info.value_param() ? kBackendCaseCost : kPlainCaseCost;
            g.tests.push_back(name);
        }
    }
    std::vector<FileGroup*> groups;
    for (auto& [file, g] : byFile)
        groups.push_back(&g);
    std::stable_sort(groups.begin(), groups.end(),
                     [](const FileGroup* a, const FileGroup* b) { return a->cost > b->cost; });
    std::vector<double> load(count, 0.0);
    std::string filter;
    size_t files = 0, cases = 0;
    for (const FileGroup* g : groups) {
        const size_t lightest = size_t(std::min_element(load.begin(), load.end()) - load.begin());
        load[lightest] += g->cost;
        if (lightest != index) continue;
        ++files;
        for (const std::string& name : g->tests) {
            if (!filter.empty()) filter += ':';
            filter += name;
            ++cases;
        }
    }
    std::printf("[shard %u/%u] %zu test files, %zu cases\n", index, count, files, cases);
    // No file for this shard: a pattern no test name can match (names have no spaces).
    return filter.empty() ? std::string("no test in this shard") : filter;
}

} // namespace

int main(int argc, char** argv) {
    ::testing::InitGoogleTest(&argc, argv);
    if (const char* spec = std::getenv("SPIKEFORGE_TEST_SHARD"); spec && *spec) {
        if (std::getenv("GTEST_TOTAL_SHARDS")) {
            std::fprintf(stderr, "SPIKEFORGE_TEST_SHARD and GTEST_TOTAL_SHARDS are both set: "
                                 "use one way of sharding\n");
            return 2;
        }
        GTEST_FLAG_SET(filter, shardFilter(spec));
        // A death test's child process runs this binary again with the one case as its
        // filter: it must run that case, not a shard of it.
        ::unsetenv("SPIKEFORGE_TEST_SHARD");
    }
    return RUN_ALL_TESTS();
}
