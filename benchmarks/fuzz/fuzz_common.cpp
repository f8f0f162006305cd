#include "fuzz_common.hpp"

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include <fcntl.h>
#include <unistd.h>

namespace spikeforge::fuzz {

namespace fs = std::filesystem;

namespace {

// ---- crash capture: what a signal handler needs, set before each input ----
const std::string* g_input = nullptr;
char g_crashPath[4096] = {};

void writeAll(int fd, const char* data, size_t size) {
    while (size > 0) {
        const ssize_t n = ::write(fd, data, size);
        if (n <= 0) return;
        data += n;
        size -= static_cast<size_t>(n);
    }
}

// Async-signal-safe: open, write and close only. Saves the input, then dies of the same signal
// so the exit status still tells what happened.
extern "C" void onFatalSignal(int sig) {
    const char* what = sig == SIGALRM ? "input took longer than the per-input limit (hang)"
                                      : "crash (fatal signal)";
    if (g_input != nullptr && g_crashPath[0] != '\0') {
        const int fd = ::open(g_crashPath, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fd >= 0) {
            writeAll(fd, g_input->data(), g_input->size());
            ::close(fd);
        }
        writeAll(2, "\nFINDING: ", 10);
        writeAll(2, what, std::strlen(what));
        writeAll(2, "; input saved to ", 17);
        writeAll(2, g_crashPath, std::strlen(g_crashPath));
        writeAll(2, "\n", 1);
    }
    const int raised = sig == SIGALRM ? SIGABRT : sig;
    std::signal(raised, SIG_DFL);
    std::raise(raised);
}

void installCrashHandlers() {
    // An alternate stack, so that a stack overflow (deep recursion) is still reported.
    static std::vector<char> altStack(1 << 16);
    stack_t ss{};
    ss.ss_sp = altStack.data();
    ss.ss_size = altStack.size();
    sigaltstack(&ss, nullptr);
    struct sigaction sa {};
    sa.sa_handler = onFatalSignal;
    sa.sa_flags = SA_ONSTACK;
    sigemptyset(&sa.sa_mask);
    for (int sig : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGALRM})
        sigaction(sig, &sa, nullptr);
}

[[noreturn]] void usage(const char* target, const char* description, int status) {
    std::ostream& out = status == 0 ? std::cout : std::cerr;
    out << "usage: fuzz_" << target << " [options] [SEED_FILE_OR_DIR...]\n"
        << description << "\n\n"
        << "  --inputs N        inputs to try (default 1000000)\n"
        << "  --seed S          mutation engine seed (default 1)\n"
        << "  --time-limit S    stop after S seconds (default: none)\n"
        << "  --input-limit S   one input running longer than S s is a finding (default 10)\n"
        << "  --max-length B    longest input in bytes (default 65536)\n"
        << "  --out DIR         where findings are written (default .)\n"
        << "  --keep-going      record exception findings and continue (crashes still stop)\n"
        << "  --replay          run the given files once each (reproduce a finding)\n"
        << "  --quiet           no progress lines\n";
    std::exit(status);
}

} // namespace

Options parseOptions(int argc, char** argv, const char* target, const char* description) {
    Options o;
    for (int i = 1; i < argc; ++i) {
        const std::string arg = argv[i];
        const auto value = [&]() -> std::string {
            if (i + 1 >= argc) usage(target, description, 2);
            return argv[++i];
        };
        try {
            if (arg == "--help" || arg == "-h")
                usage(target, description, 0);
            else if (arg == "--inputs")
                o.inputs = std::stoull(value());
            else if (arg == "--seed")
                o.seed = std::stoull(value());
            else if (arg == "--time-limit")
                o.timeLimit = std::stod(value());
            else if (arg == "--input-limit")
                o.inputLimit = static_cast<unsigned>(std::stoul(value()));
            else if (arg == "--max-length")
                o.maxLength = std::stoull(value());
            else if (arg == "--out")
                o.outDir = value();
            else if (arg == "--keep-going")
                o.keepGoing = true;
            else if (arg == "--replay")
                o.replay = true;
            else if (arg == "--quiet")
                o.quiet = true;
            else if (!arg.empty() && arg[0] == '-')
                usage(target, description, 2);
            else
                o.seedPaths.push_back(arg);
        } catch (const std::logic_error&) { // stoull/stod: not a number
            std::cerr << "error: bad value for " << arg << '\n';
            std::exit(2);
        }
    }
    if (o.inputLimit == 0 || o.maxLength == 0) usage(target, description, 2);
    std::error_code ec;
    fs::create_directories(o.outDir, ec);
    if (ec) {
        std::cerr << "error: cannot create --out directory '" << o.outDir << "': " << ec.message()
                  << '\n';
        std::exit(2);
    }
    return o;
}

std::vector<std::string> readSeedFiles(const std::vector<std::string>& paths, size_t maxBytes) {
    std::vector<fs::path> files;
    for (const std::string& p : paths) {
        std::error_code ec;
        if (fs::is_directory(p, ec)) {
            for (const auto& entry : fs::directory_iterator(p, ec))
                if (entry.is_regular_file(ec)) files.push_back(entry.path());
        } else if (fs::is_regular_file(p, ec)) {
            files.push_back(p);
        } else {
            std::cerr << "warning: seed '" << p << "' is not a file or directory; skipped\n";
        }
    }
    std::sort(files.begin(), files.end()); // the same seed order on every run
    std::vector<std::string> out;
    for (const fs::path& f : files) {
        std::error_code ec;
        if (fs::file_size(f, ec) > maxBytes || ec) continue;
        std::ifstream in(f, std::ios::binary);
        std::ostringstream text;
        text << in.rdbuf();
        out.push_back(text.str());
    }
    return out;
}

// ---- Mutator ----

Mutator::Mutator(uint64_t seed, std::vector<std::string> seeds, std::vector<std::string> dictionary,
                 size_t maxLength)
    : m_rng(seed), m_seeds(std::move(seeds)), m_dictionary(std::move(dictionary)),
      m_maxLength(maxLength) {
    if (m_seeds.empty()) m_seeds.push_back("");
    m_fixedSeeds = m_seeds.size();
    if (m_dictionary.empty()) m_dictionary.push_back(" ");
}

// Half the picks come from the given seeds, so that learned inputs (which drift towards what
// the target accepts most easily) cannot crowd them out.
const std::string& Mutator::pickSeed() {
    const size_t learned = m_seeds.size() - m_fixedSeeds;
    if (learned > 0 && m_rng() % 2 == 0) return m_seeds[m_fixedSeeds + m_rng() % learned];
    return m_seeds[m_rng() % m_fixedSeeds];
}

void Mutator::addSeed(const std::string& input) {
    constexpr size_t maxLearned = 4096; // inputs kept besides the given seeds
    if (input.size() > m_maxLength / 4 || m_rng() % 8 != 0) return;
    if (m_seeds.size() < m_fixedSeeds + maxLearned) {
        m_seeds.push_back(input);
        return;
    }
    m_seeds[m_fixedSeeds + m_rng() % maxLearned] = input;
}

std::string Mutator::randomSoup() {
    std::string s;
    const size_t tokens = 1 + m_rng() % 64;
    for (size_t i = 0; i < tokens; ++i) {
        if (m_rng() % 8 == 0)
            s += static_cast<char>(m_rng() % 256);
        else
            s += m_dictionary[m_rng() % m_dictionary.size()];
        if (m_rng() % 3 == 0) s += m_rng() % 4 == 0 ? '\n' : ' ';
    }
    return s;
}

void Mutator::mutateOnce(std::string& s) {
    static const char* const numbers[] = {"0",
                                          "-0",
                                          "1",
                                          "-1",
                                          "4294967295",
                                          "4294967296",
                                          "2147483648",
                                          "1e39",
                                          "1e308",
                                          "1e309",
                                          "-1e400",
                                          "nan",
                                          "inf",
                                          "-inf",
                                          "1e-320",
                                          "0.5",
                                          "0x7fffffff",
                                          "9223372036854775808",
                                          "18446744073709551616",
                                          "3.4028236e38"};
    const std::string& word = m_dictionary[m_rng() % m_dictionary.size()];
    switch (m_rng() % 12) {
    case 0: // flip a bit
        if (!s.empty()) s[m_rng() % s.size()] ^= static_cast<char>(1u << (m_rng() % 8));
        break;
    case 1: // insert a byte
        s.insert(pos(s), 1, static_cast<char>(m_rng() % 256));
        break;
    case 2: { // delete a range
        const size_t at = pos(s);
        s.erase(at, m_rng() % 4 == 0 ? m_rng() % 256 : 1 + m_rng() % 8);
        break;
    }
    case 3: { // duplicate a range somewhere else
        if (s.empty()) break;
        const size_t from = m_rng() % s.size();
        const std::string piece = s.substr(from, 1 + m_rng() % 64);
        s.insert(pos(s), piece);
        break;
    }
    case 4: // insert a dictionary word
    case 5:
        s.insert(pos(s), word);
        break;
    case 6: { // overwrite with a dictionary word
        const size_t at = pos(s);
        s.replace(at, std::min(word.size(), s.size() - at), word);
        break;
    }
    case 7: { // repeat a word many times: deep nesting, long lines
        std::string run;
        const size_t times = 1 + m_rng() % 2000;
        for (size_t i = 0; i < times && run.size() < m_maxLength; ++i)
            run += word;
        s.insert(pos(s), run);
        break;
    }
    case 8: { // splice with another seed
        const std::string& other = pickSeed();
        s = s.substr(0, pos(s)) + other.substr(other.empty() ? 0 : m_rng() % other.size());
        break;
    }
    case 9: { // replace a number (or insert one) with an interesting value
        const std::string number = numbers[m_rng() % std::size(numbers)];
        const size_t at = s.find_first_of("0123456789", pos(s));
        if (at == std::string::npos) {
            s.insert(pos(s), number);
            break;
        }
        const size_t end = s.find_first_not_of("0123456789.eE+-x_", at);
        s.replace(at, (end == std::string::npos ? s.size() : end) - at, number);
        break;
    }
    case 10: { // swap two lines
        std::vector<std::string> lines;
        std::stringstream in(s);
        for (std::string line; std::getline(in, line);)
            lines.push_back(line);
        if (lines.size() < 2) break;
        std::swap(lines[m_rng() % lines.size()], lines[m_rng() % lines.size()]);
        s.clear();
        for (const std::string& line : lines)
            s += line + '\n';
        break;
    }
    case 11: // truncate
        s.resize(pos(s));
        break;
    }
}

std::string Mutator::mutate(std::string s) {
    const unsigned edits = 1 + static_cast<unsigned>(std::geometric_distribution<>(0.4)(m_rng));
    for (unsigned i = 0; i < edits; ++i)
        mutateOnce(s);
    return s;
}

std::string Mutator::next() {
    std::string s;
    switch (m_rng() % 10) {
    case 0:
        s = randomSoup();
        break;
    case 1: { // splice two seeds
        const std::string& a = pickSeed();
        const std::string& b = pickSeed();
        s = a.substr(0, pos(a)) + b.substr(b.empty() ? 0 : m_rng() % b.size());
        break;
    }
    default:
        s = mutate(pickSeed());
    }
    if (s.size() > m_maxLength) s.resize(m_maxLength);
    return s;
}

// ---- driver loop ----

int replayInputs(const char* target, const Options& options, const std::vector<std::string>& inputs,
                 unsigned repeat, const std::function<Outcome(const std::string&)>& run) {
    const std::string crashPath =
        (fs::path(options.outDir) / ("finding-" + std::string(target) + "-crash.txt")).string();
    std::snprintf(g_crashPath, sizeof g_crashPath, "%s", crashPath.c_str());
    installCrashHandlers();
    unsigned findings = 0;
    for (size_t i = 0; i < inputs.size(); ++i) {
        unsigned accepted = 0;
        std::string failure;
        g_input = &inputs[i];
        for (unsigned r = 0; r < repeat && failure.empty(); ++r) {
            alarm(options.inputLimit);
            try {
                accepted += run(inputs[i]) == Outcome::Accepted ? 1 : 0;
            } catch (const std::exception& e) {
                failure = std::string("unexpected exception: ") + e.what();
            } catch (...) {
                failure = "unexpected exception of unknown type";
            }
            alarm(0);
        }
        g_input = nullptr;
        std::cout << "input " << i + 1 << ": "
                  << (failure.empty() ? "accepted " + std::to_string(accepted) + " of " +
                                            std::to_string(repeat) + " times"
                                      : "FINDING: " + failure)
                  << '\n';
        findings += failure.empty() ? 0 : 1;
    }
    return findings == 0 ? 0 : 1;
}

void reportFinding(const Options& options, const char* target, const std::string& input,
                   const std::string& what) {
    static unsigned count = 0;
    const fs::path path = fs::path(options.outDir) / ("finding-" + std::string(target) + "-" +
                                                      std::to_string(++count) + ".txt");
    std::ofstream(path, std::ios::binary) << input;
    std::cerr << "FINDING: " << what << "; input saved to " << path.string() << '\n';
}

int runFuzzer(const char* target, const Options& options, Mutator& mutator,
              const std::function<Outcome(const std::string&)>& run) {
    using Clock = std::chrono::steady_clock;
    const std::string crashPath =
        (fs::path(options.outDir) / ("finding-" + std::string(target) + "-crash.txt")).string();
    std::snprintf(g_crashPath, sizeof g_crashPath, "%s", crashPath.c_str());
    installCrashHandlers();

    const Clock::time_point start = Clock::now();
    Clock::time_point lastReport = start;
    uint64_t done = 0, accepted = 0, rejected = 0, findings = 0;
    const auto seconds = [&] {
        return std::chrono::duration<double>(Clock::now() - start).count();
    };
    for (; done < options.inputs; ++done) {
        if (options.timeLimit > 0.0 && seconds() >= options.timeLimit) break;
        const std::string input = mutator.next();
        g_input = &input;
        alarm(options.inputLimit);
        std::string failure;
        try {
            if (run(input) == Outcome::Accepted) {
                ++accepted;
                mutator.addSeed(input);
            } else {
                ++rejected;
            }
        } catch (const std::exception& e) {
            failure = std::string("unexpected exception: ") + e.what();
        } catch (...) {
            failure = "unexpected exception of unknown type";
        }
        alarm(0);
        g_input = nullptr;
        if (!failure.empty()) {
            ++findings;
            reportFinding(options, target, input, failure);
            if (!options.keepGoing) std::abort();
        }
        if (!options.quiet && Clock::now() - lastReport > std::chrono::seconds(10)) {
            lastReport = Clock::now();
            std::cerr << "fuzz_" << target << ": " << done + 1 << " inputs, "
                      << static_cast<uint64_t>(double(done + 1) / seconds()) << " inputs/s\n";
        }
    }
    const double total = seconds();
    std::cout << "fuzz_" << target << ": " << done << " inputs in " << total << " s ("
              << static_cast<uint64_t>(double(done) / std::max(total, 1e-9)) << " inputs/s), "
              << accepted << " accepted, " << rejected << " rejected, " << findings
              << " findings\n";
    return findings == 0 ? 0 : 1;
}

} // namespace spikeforge::fuzz
