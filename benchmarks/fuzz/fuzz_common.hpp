#pragma once
// Shared pieces of the fuzz drivers (fuzz_snippet, fuzz_config): options, a mutation engine
// that needs no compiler instrumentation (GCC has no libFuzzer), and crash capture.
//
// A "finding" is any outcome other than success or the documented user error: another
// exception, a crash (signal), or one input taking longer than the per-input limit. The input
// is written to a file (finding-<target>-<n>.txt in --out) before the driver aborts.
#include <cstdint>
#include <functional>
#include <random>
#include <string>
#include <vector>

namespace spikeforge::fuzz {

struct Options {
    uint64_t inputs = 1000000;          // how many inputs to try
    uint64_t seed = 1;                  // of the mutation engine: one seed, one input sequence
    double timeLimit = 0.0;             // [s] stop after this long; 0 = no limit
    unsigned inputLimit = 10;           // [s] one input taking longer is a finding (a hang)
    size_t maxLength = 1 << 16;         // [bytes] longest generated input
    std::string outDir = ".";           // where findings are written
    std::vector<std::string> seedPaths; // extra seed files or directories
    bool keepGoing = false;             // record exception findings and go on (crashes still abort)
    bool replay = false;                // run the given files once each instead of fuzzing
    bool quiet = false;
};

// Parses the command line; prints usage and exits on --help or a bad option.
Options parseOptions(int argc, char** argv, const char* target, const char* description);

// Reads every regular file in `paths` (directories: their files, not recursively) up to
// `maxBytes` each.
std::vector<std::string> readSeedFiles(const std::vector<std::string>& paths, size_t maxBytes);

// Makes inputs: fresh random token soup, mutated seeds, and splices of two seeds. Inputs that
// the target accepted can be added back as seeds (a crude stand-in for coverage feedback).
class Mutator {
public:
    Mutator(uint64_t seed, std::vector<std::string> seeds, std::vector<std::string> dictionary,
            size_t maxLength);
    std::string next();
    void addSeed(const std::string& input); // bounded pool: replaces a random one when full

private:
    const std::string& pickSeed();
    std::string randomSoup();
    std::string mutate(std::string s);
    void mutateOnce(std::string& s);
    size_t pos(const std::string& s) { return s.empty() ? 0 : m_rng() % (s.size() + 1); }

    std::mt19937_64 m_rng;
    std::vector<std::string> m_seeds;
    size_t m_fixedSeeds;
    std::vector<std::string> m_dictionary;
    size_t m_maxLength;
};

// Outcome of one input, as the target reports it.
enum class Outcome {
    Accepted, // the front end took it
    Rejected, // the documented user error (ModelError)
};

// Runs `target` on `options.inputs` inputs from `mutator` with crash capture and a per-input
// time limit; prints progress and the final count and rate. Returns the process exit status:
// 0 when there was no finding.
int runFuzzer(const char* target, const Options& options, Mutator& mutator,
              const std::function<Outcome(const std::string&)>& run);

// --replay: runs each input `repeat` times (the snippet target: once per context) with the same
// crash capture, printing each outcome. Returns 0 when none was a finding.
int replayInputs(const char* target, const Options& options, const std::vector<std::string>& inputs,
                 unsigned repeat, const std::function<Outcome(const std::string&)>& run);

// Writes a finding's input to <outDir>/finding-<target>-<n>.txt (and says so on stderr).
void reportFinding(const Options& options, const char* target, const std::string& input,
                   const std::string& what);

} // namespace spikeforge::fuzz
