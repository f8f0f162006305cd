// The CPU backend's compile cache and compiler process: where the cache lives and who may own
// it, what the key covers, libraries that must be rebuilt rather than run, one compile for
// concurrent builds, quoting-proof paths, the time limit, interrupts, and compiler errors.
#include "backends/common/sha256.hpp"
#include "backends/cpu/cache.hpp"
#include "backends/cpu/compiler.hpp"
#include "backends/cpu/cpu_backend.hpp"
#include "backends/cpu/precompiled_prelude.hpp"
#include "spikeforge/models.hpp"
#include "spikeforge/simulation.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <pwd.h>
#include <sstream>
#include <sys/stat.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

using namespace spikeforge;
namespace fs = std::filesystem;

namespace {

struct TempDir {
    fs::path path;
    TempDir() {
        std::string tmpl = (fs::temp_directory_path() / "sf-cache-test-XXXXXX").string();
        if (!mkdtemp(tmpl.data())) throw std::runtime_error("mkdtemp failed");
        path = tmpl;
    }
    ~TempDir() {
        std::error_code ec;
        fs::permissions(path, fs::perms::owner_all, fs::perm_options::add, ec);
        fs::remove_all(path, ec);
    }
};

std::string readAll(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

void writeAll(const fs::path& p, const std::string& text) {
    std::ofstream out(p, std::ios::binary | std::ios::trunc);
    out << text;
}

constexpr double kTauM = 20.0, kVrest = -70.0, kAmp = 1.5, kDt = 0.1; // [ms] [mV] [nA] [ms]

// One LIF cell under a constant current, threshold out of reach: V follows a closed form.
void buildCell(Model& m, double amp = kAmp) {
    m.setDT(kDt);
    m.setPrecision(Precision::Double);
    m.addNeuronGroup("Cell", 1, models::LIF(),
                     {{"C", 1.0},
                      {"TauM", kTauM},
                      {"Vrest", kVrest},
                      {"Vreset", kVrest},
                      {"Vthresh", 1000.0},
                      {"Ioffset", 0.0},
                      {"TauRefrac", 2.0}},
                     {{"V", kVrest}, {"RefracTime", 0.0}});
    m.addCurrentSource("Drive", models::DC(), "Cell", {{"amp", amp}}, {});
}

BackendPreferences prefsFor(const fs::path& dir) {
    BackendPreferences p;
    p.cacheDir = dir.string();
    p.debugCode = true; // -O0: the fastest compile
    return p;
}

// Runs the cell for 50 steps and checks V against the closed form; returns the build info.
BuildInfo runCell(const BackendPreferences& prefs, double amp = kAmp) {
    Model m("cell");
    buildCell(m, amp);
    Simulation sim(m, prefs);
    sim.run(50);
    sim.pull("Cell", "V");
    const double vInf = kVrest + amp * kTauM;
    const double expected = vInf + (kVrest - vInf) * std::exp(-50 * kDt / kTauM);
    EXPECT_NEAR(sim.view<double>("Cell", "V")[0], expected, 1e-9);
    return sim.buildInfo();
}

std::string keyOf(const BuildInfo& info) {
    return fs::path(info.sourcePath).stem().string();
}

std::vector<std::string> tempFiles(const fs::path& dir) {
    std::vector<std::string> out;
    for (const auto& e : fs::directory_iterator(dir))
        if (e.path().filename().string().find(".tmp.") != std::string::npos)
            out.push_back(e.path().filename().string());
    return out;
}

// A stand-in compiler: answers the identity probes, then runs `body`.
fs::path fakeCompiler(const fs::path& dir, const std::string& body) {
    const fs::path p = dir / "fake-cc";
    writeAll(p, "#!/bin/sh\ncase \"$1\" in\n  --version) echo 'fake-cc 1.0'; exit 0 ;;\n"
                "  '-###') exit 0 ;;\nesac\n" +
                    body);
    fs::permissions(p, fs::perms::owner_all);
    return p;
}

// A compiler that starts a long child (recording both pids next to itself) and waits.
const char* kSleepyBody = "sleep 30 &\necho $! > \"$0.child\"\necho $$ > \"$0.shell\"\nwait\n";

bool processGone(pid_t pid) {
    if (kill(pid, 0) != 0) return errno == ESRCH;
    // A zombie whose parent is gone waits for init to reap it: it runs no more.
    const std::string stat = readAll("/proc/" + std::to_string(pid) + "/stat");
    const size_t close = stat.rfind(')');
    return close != std::string::npos && close + 2 < stat.size() && stat[close + 2] == 'Z';
}

bool allGoneWithin(const std::vector<pid_t>& pids, double seconds) {
    const auto t0 = std::chrono::steady_clock::now();
    while (std::chrono::steady_clock::now() - t0 < std::chrono::duration<double>(seconds)) {
        bool gone = true;
        for (pid_t p : pids)
            gone = gone && processGone(p);
        if (gone) return true;
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return false;
}

std::vector<pid_t> recordedPids(const fs::path& compiler) {
    std::vector<pid_t> out;
    for (const char* ext : {".child", ".shell"}) {
        const std::string text = readAll(compiler.string() + ext);
        if (!text.empty()) out.push_back(static_cast<pid_t>(std::stol(text)));
    }
    return out;
}

size_t occurrences(const std::string& text, const std::string& what) {
    size_t n = 0;
    for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1))
        n++;
    return n;
}

} // namespace

TEST(Sha256, MatchesPublishedVectors) {
    EXPECT_EQ(backends::sha256Hex(""),
              "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    EXPECT_EQ(backends::sha256Hex("abc"),
              "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    EXPECT_EQ(backends::sha256Hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
              "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
    EXPECT_EQ(backends::sha256Hex(std::string(1000000, 'a')),
              "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST(CacheKey, ChangesWithSourceCompilerVersionTargetAndFlags) {
    const cpu::CompilerIdentity cc{"/usr/bin/c++", "c++ 12.2", "-march=rocketlake -mavx2"};
    const std::vector<std::string> flags{"-O3", "-march=native"};
    const std::string key = cpu::cache::computeKey("int x;", cc, flags);
    EXPECT_EQ(key.size(), 64u);
    EXPECT_EQ(key, cpu::cache::computeKey("int x;", cc, flags));
    EXPECT_NE(key, cpu::cache::computeKey("int y;", cc, flags));
    EXPECT_NE(key, cpu::cache::computeKey("int x;", cc, {"-O2", "-march=native"}));
    EXPECT_NE(key, cpu::cache::computeKey("int x;", cc, {"-O3-march=native"}));
    auto other = cc;
    other.path = "/usr/bin/clang++";
    EXPECT_NE(key, cpu::cache::computeKey("int x;", other, flags));
    other = cc;
    other.version = "c++ 13.1";
    EXPECT_NE(key, cpu::cache::computeKey("int x;", other, flags));
    other = cc;
    other.target = "-march=znver4 -mavx2";
    EXPECT_NE(key, cpu::cache::computeKey("int x;", other, flags));
}

TEST(CacheKey, IdentityResolvesWhatNativeMeans) {
    const std::string cc = cpu::resolveProgram(cpu::compilerName(""));
    const auto id = cpu::identifyCompiler(cc, {"-march=native"}, 60.0);
    EXPECT_FALSE(id.version.empty());
    // The resolved CPU shows up as a concrete -march/-target-cpu or the CPU's own flags.
    std::istringstream tokens(id.target);
    bool concrete = false;
    for (std::string t; tokens >> t;)
        concrete =
            concrete || (t.rfind("-m", 0) == 0 && t != "-march=native") || t.rfind("flags", 0) == 0;
    EXPECT_TRUE(concrete) << id.target;
    const auto generic = cpu::identifyCompiler(cc, {"-march=x86-64"}, 60.0);
    EXPECT_NE(cpu::cache::computeKey("s", id, {"-march=native"}),
              cpu::cache::computeKey("s", generic, {"-march=native"}));
}

TEST(CacheDirectory, HomeUnsetStillGivesAPerUserDirectory) {
    auto saved = [](const char* n) -> std::optional<std::string> {
        const char* v = std::getenv(n);
        return v ? std::optional<std::string>(v) : std::nullopt;
    };
    const auto home = saved("HOME"), sf = saved("SPIKEFORGE_CACHE"), xdg = saved("XDG_CACHE_HOME");
    unsetenv("HOME");
    unsetenv("SPIKEFORGE_CACHE");
    unsetenv("XDG_CACHE_HOME");
    const passwd* pw = getpwuid(getuid());
    ASSERT_NE(pw, nullptr);
    const fs::path dir = cpu::cache::locate({});
    setenv("XDG_CACHE_HOME", "relative/dir", 1); // ignored, as the XDG spec says
    const fs::path relXdg = cpu::cache::locate({});
    setenv("XDG_CACHE_HOME", "/somewhere/cache", 1);
    const fs::path absXdg = cpu::cache::locate({});
    auto restore = [](const char* name, const std::optional<std::string>& value) {
        value ? setenv(name, value->c_str(), 1) : unsetenv(name);
    };
    restore("HOME", home);
    restore("SPIKEFORGE_CACHE", sf);
    restore("XDG_CACHE_HOME", xdg);
    EXPECT_EQ(dir, fs::path(pw->pw_dir) / ".cache" / "spikeforge");
    EXPECT_NE(dir, fs::temp_directory_path() / "spikeforge-cache");
    EXPECT_EQ(relXdg, dir);
    EXPECT_EQ(absXdg, fs::path("/somewhere/cache/spikeforge"));
}

TEST(CacheDirectory, OwnedByAnotherUserIsRefused) {
    if (geteuid() != 0) GTEST_SKIP() << "needs root to give a directory away";
    TempDir tmp;
    const fs::path theirs = tmp.path / "theirs";
    fs::create_directory(theirs);
    chmod(theirs.c_str(), 0700);
    ASSERT_EQ(chown(theirs.c_str(), 65534, 65534), 0);
    try {
        cpu::cache::prepare(prefsFor(theirs));
        ADD_FAILURE() << "another user's cache directory was accepted";
    } catch (const BackendError& e) {
        EXPECT_NE(std::string(e.what()).find("not by this user"), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find(theirs.string()), std::string::npos) << e.what();
    }
}

TEST(CacheDirectory, CreatedPrivateAndRefusedWhenSharedOrALink) {
    TempDir tmp;
    const fs::path fresh = tmp.path / "new" / "cache";
    cpu::cache::prepare(prefsFor(fresh));
    struct stat st {};
    ASSERT_EQ(lstat(fresh.c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777, 0700u);

    const fs::path shared = tmp.path / "shared";
    fs::create_directory(shared);
    chmod(shared.c_str(), 0777);
    try {
        runCell(prefsFor(shared));
        ADD_FAILURE() << "a world-writable cache directory was accepted";
    } catch (const BackendError& e) {
        EXPECT_NE(std::string(e.what()).find(shared.string()), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find("writable by group or others"), std::string::npos);
    }
    chmod(shared.c_str(), 0770);
    EXPECT_THROW(cpu::cache::prepare(prefsFor(shared)), BackendError);

    const fs::path link = tmp.path / "link";
    fs::create_directory_symlink(fresh, link);
    try {
        cpu::cache::prepare(prefsFor(link));
        ADD_FAILURE() << "a symlinked cache directory was accepted";
    } catch (const BackendError& e) {
        EXPECT_NE(std::string(e.what()).find("symbolic link"), std::string::npos) << e.what();
    }
    writeAll(tmp.path / "file", "x");
    EXPECT_THROW(cpu::cache::prepare(prefsFor(tmp.path / "file")), BackendError);
}

TEST(CacheLibrary, CarriesItsKeyAndNoModelName) {
    TempDir tmp;
    Model m("secret_model_name_q7");
    buildCell(m);
    Simulation sim(m, prefsFor(tmp.path));
    const BuildInfo& info = sim.buildInfo();
    const std::string key = keyOf(info);
    EXPECT_FALSE(info.cacheHit);
    EXPECT_EQ(cpu::cache::inspectLibrary(tmp.path / (key + ".so"), key), cpu::cache::FileState::Ok);
    EXPECT_EQ(cpu::cache::inspectLibrary(tmp.path / (key + ".so"), std::string(64, '0')),
              cpu::cache::FileState::WrongKey);
    const std::string source = readAll(info.sourcePath);
    EXPECT_NE(source.find(cpu::cache::keyMark(key)), std::string::npos);
    EXPECT_EQ(source.find("secret_model_name_q7"), std::string::npos);
    EXPECT_TRUE(runCell(prefsFor(tmp.path)).cacheHit); // same structure, same key
    EXPECT_TRUE(tempFiles(tmp.path).empty());
}

// Every damaged or foreign library in place of the model's is rebuilt, never run.
TEST(CacheLibrary, DamagedOrForeignLibrariesAreRebuilt) {
    TempDir good, other;
    const std::string key = keyOf(runCell(prefsFor(good.path)));
    const std::string lib = readAll(good.path / (key + ".so"));
    const std::string otherKey = keyOf(runCell(prefsFor(other.path), 0.5));
    ASSERT_NE(key, otherKey);
    const std::string foreign = readAll(other.path / (otherKey + ".so"));
    ASSERT_GT(lib.size(), 1000u);

    // A complete library with the key text that dlopen refuses (an undefined symbol).
    const fs::path unloadable = other.path / "unloadable.so";
    writeAll(other.path / "unloadable.cpp",
             "extern \"C\" void sf_missing_fn();\nextern \"C\" void f() { sf_missing_fn(); }\n");
    const auto cc =
        cpu::runProcess({cpu::resolveProgram(cpu::compilerName("")), "-shared", "-fPIC", "-o",
                         unloadable.string(), (other.path / "unloadable.cpp").string()},
                        {});
    ASSERT_TRUE(cc.ok()) << cc.output;

    const std::vector<std::pair<std::string, std::string>> cases = {
        {"unloadable", readAll(unloadable) + cpu::cache::keyMark(key)},
        {"empty", ""},
        {"truncated", lib.substr(0, lib.size() / 2)},
        {"header only", lib.substr(0, 64)},
        {"not ELF", std::string(4096, 'x')},
        {"foreign", foreign},
        // Mentions this key but exports another: caught only after loading.
        {"forged key", foreign + cpu::cache::keyMark(key)},
    };
    for (const auto& [what, bytes] : cases) {
        TempDir dir;
        writeAll(dir.path / (key + ".so"), bytes);
        if (what == "unloadable" || what == "forged key") { // pass the checks before dlopen
            EXPECT_EQ(cpu::cache::inspectLibrary(dir.path / (key + ".so"), key),
                      cpu::cache::FileState::Ok);
        }
        // Left by a killed build (no such pid): cleaned once the lock is held.
        writeAll(dir.path / (key + ".tmp.999999999.0123456789abcdef.so"), bytes);
        const BuildInfo info = runCell(prefsFor(dir.path));
        EXPECT_FALSE(info.cacheHit) << what;
        EXPECT_EQ(cpu::cache::inspectLibrary(dir.path / (key + ".so"), key),
                  cpu::cache::FileState::Ok)
            << what;
        EXPECT_TRUE(tempFiles(dir.path).empty()) << what;
    }
}

TEST(CacheLibrary, ConcurrentBuildsOfOneModelCompileOnce) {
    TempDir tmp;
    constexpr int kThreads = 3;
    std::atomic<int> ready{0};
    std::vector<BuildInfo> infos(kThreads);
    std::vector<std::thread> threads;
    for (int i = 0; i < kThreads; i++)
        threads.emplace_back([&, i] {
            ready++;
            while (ready < kThreads)
                std::this_thread::yield();
            infos[i] = runCell(prefsFor(tmp.path));
        });
    for (auto& t : threads)
        t.join();
    int compiled = 0;
    for (const auto& info : infos)
        compiled += info.cacheHit ? 0 : 1;
    EXPECT_EQ(compiled, 1);
    EXPECT_TRUE(tempFiles(tmp.path).empty());
}

TEST(CacheLibrary, PathWithQuotesAndSpacesWorks) {
    TempDir tmp;
    const fs::path dir = tmp.path / "it's a \"cache\" $(dir) `x`";
    EXPECT_FALSE(runCell(prefsFor(dir)).cacheHit);
    EXPECT_TRUE(runCell(prefsFor(dir)).cacheHit);
}

TEST(Compiler, MustBeOneProgram) {
    TempDir tmp;
    auto prefs = prefsFor(tmp.path);
    prefs.compiler = "c++ -O2";
    try {
        runCell(prefs);
        ADD_FAILURE() << "a compiler with arguments was accepted";
    } catch (const BackendError& e) {
        EXPECT_NE(std::string(e.what()).find("one program"), std::string::npos) << e.what();
    }
    prefs.compiler = (tmp.path / "no-such-cc").string();
    EXPECT_THROW(runCell(prefs), BackendError);
    EXPECT_NE(cpu::compilerStatus(prefs), "");
    EXPECT_EQ(cpu::compilerStatus({}), "");
}

TEST(Compiler, TimeLimitStopsTheWholeCompilerGroup) {
    TempDir tools, cache;
    auto prefs = prefsFor(cache.path);
    prefs.compiler = fakeCompiler(tools.path, kSleepyBody).string();
    prefs.compileTimeout = 1.0;
    const auto t0 = std::chrono::steady_clock::now();
    try {
        runCell(prefs);
        ADD_FAILURE() << "the time limit did not stop the compiler";
    } catch (const BackendError& e) {
        const std::string msg = e.what();
        EXPECT_NE(msg.find("limit of 1 s"), std::string::npos) << msg;
        EXPECT_NE(msg.find("compileTimeout"), std::string::npos) << msg;
    }
    const double took =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    EXPECT_LT(took, 10.0);
    const auto pids = recordedPids(prefs.compiler);
    EXPECT_EQ(pids.size(), 2u);
    EXPECT_TRUE(allGoneWithin(pids, 5.0));
    EXPECT_TRUE(tempFiles(cache.path).empty());
    prefs.compileTimeout = -1.0;
    EXPECT_THROW(runCell(prefs), ModelError);
}

namespace {
std::atomic<int> g_hostSignals{0};
extern "C" void hostHandler(int) {
    g_hostSignals++;
}
} // namespace

TEST(Compiler, InterruptKillsTheCompilerAndReachesTheHostHandler) {
    TempDir tools, cache;
    auto prefs = prefsFor(cache.path);
    prefs.compiler = fakeCompiler(tools.path, kSleepyBody).string();
    struct sigaction host {
    }, old{}, after{};
    host.sa_handler = hostHandler;
    sigemptyset(&host.sa_mask);
    sigaction(SIGINT, &host, &old);
    g_hostSignals = 0;
    std::thread interrupter([&] {
        const fs::path marker = prefs.compiler + ".child";
        for (int i = 0; i < 500 && !fs::exists(marker); i++)
            std::this_thread::sleep_for(std::chrono::milliseconds(20));
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
        kill(getpid(), SIGINT);
    });
    EXPECT_THROW(runCell(prefs), BackendError);
    interrupter.join();
    sigaction(SIGINT, nullptr, &after);
    sigaction(SIGINT, &old, nullptr);
    EXPECT_EQ(g_hostSignals.load(), 1);
    EXPECT_EQ(after.sa_handler, hostHandler); // the host's handler is back
    EXPECT_TRUE(allGoneWithin(recordedPids(prefs.compiler), 5.0));
    EXPECT_TRUE(tempFiles(cache.path).empty());
}

// spikeforge killed outright (SIGKILL, no chance to clean up): its compiler goes too.
TEST(Compiler, DiesWithSpikeforge) {
    TempDir tools;
    const fs::path cc = fakeCompiler(tools.path, kSleepyBody);
    const pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
        cpu::runProcess({cc.string(), "compile"}, {});
        _exit(0);
    }
    for (int i = 0; i < 500 && !fs::exists(cc.string() + ".child"); i++)
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    kill(pid, SIGKILL);
    waitpid(pid, nullptr, 0);
    const auto pids = recordedPids(cc);
    EXPECT_EQ(pids.size(), 2u);
    EXPECT_TRUE(allGoneWithin(pids, 5.0));
}

TEST(CompilerErrors, EachReportedOnceAgainstTheUsersLine) {
    const std::string log = "In file included from spikeforge_generated.cpp:12:\n"
                            "Cell.simCode:2:5: fatal error: missing.h: No such file\n"
                            "Cell.simCode:3:1: error: 'q' was not declared\n"
                            "Cell.simCode:2:5: fatal error: missing.h: No such file\n"
                            "spikeforge_generated.cpp:40:2: error: generated\n"
                            "Cell.simCode:3:1: note: a note\n"
                            "compilation terminated.\n";
    EXPECT_EQ(cpu::snippetErrors(log), "  Cell.simCode:2:5: fatal error: missing.h: No such file\n"
                                       "  Cell.simCode:3:1: error: 'q' was not declared\n");
    EXPECT_EQ(cpu::snippetErrors("spikeforge_generated.cpp:1:1: error: x\n"), "");
}

TEST(CompilerErrors, FatalErrorFromTheCompilerIsAModelErrorOnce) {
    TempDir tools, cache;
    auto prefs = prefsFor(cache.path);
    const std::string line = "Cell.simCode:2:5: fatal error: missing.h: No such file";
    prefs.compiler = fakeCompiler(tools.path, "echo '" + line + "'\necho '" + line +
                                                  "' >&2\necho 'compilation terminated.'\nexit 1\n")
                         .string();
    try {
        runCell(prefs);
        ADD_FAILURE() << "a failed compile was accepted";
    } catch (const ModelError& e) {
        EXPECT_EQ(occurrences(e.what(), line), 1u) << e.what();
    }
    EXPECT_TRUE(tempFiles(cache.path).empty());
}

TEST(CompilerErrors, OtherFailuresKeepTheLogAndNameTheSource) {
    TempDir tools, cache;
    auto prefs = prefsFor(cache.path);
    prefs.compiler =
        fakeCompiler(tools.path, "echo 'spikeforge_generated.cpp:9:1: error: oops'\nexit 3\n")
            .string();
    try {
        runCell(prefs);
        ADD_FAILURE() << "a failed compile was accepted";
    } catch (const BackendError& e) {
        const std::string msg = e.what();
        EXPECT_NE(msg.find("error: oops"), std::string::npos) << msg;
        EXPECT_NE(msg.find("status 3"), std::string::npos) << msg;
        const size_t at = msg.find("source kept at ");
        ASSERT_NE(at, std::string::npos) << msg;
        const std::string kept = msg.substr(at + 15, msg.find(')', at) - at - 15);
        EXPECT_TRUE(fs::exists(kept)) << kept;
    }
    EXPECT_TRUE(tempFiles(cache.path).empty());
}

TEST(CacheLibrary, StaleTemporaryFilesAreRemoved) {
    TempDir tmp;
    const std::string key(64, 'a');
    const std::string live = std::to_string(getppid()); // alive for the whole test
    const fs::path dead = tmp.path / (key + ".tmp.999999999.00.cpp");
    const fs::path old = tmp.path / (key + ".tmp." + live + ".01.so");
    const fs::path fresh = tmp.path / (key + ".tmp." + live + ".02.so");
    const fs::path otherKey = tmp.path / (std::string(64, 'b') + ".tmp.999999999.03.so");
    for (const auto& p : {dead, old, fresh, otherKey})
        writeAll(p, "x");
    fs::last_write_time(old, fs::file_time_type::clock::now() - std::chrono::hours(2));
    cpu::cache::removeStaleTemps(tmp.path, key, std::chrono::hours(1));
    EXPECT_FALSE(fs::exists(dead));
    EXPECT_FALSE(fs::exists(old));
    EXPECT_TRUE(fs::exists(fresh));    // may belong to a live build
    EXPECT_TRUE(fs::exists(otherKey)); // another key's lock guards it
}

// A compiler that "succeeds" but writes garbage: the result is never run, and the error says so.
TEST(CacheLibrary, UnusableFreshLibraryIsABackendError) {
    TempDir tools, cache;
    auto prefs = prefsFor(cache.path);
    prefs.compiler = fakeCompiler(tools.path, "while [ $# -gt 0 ]; do\n"
                                              "  if [ \"$1\" = -o ]; then out=\"$2\"; fi; shift\n"
                                              "done\necho garbage > \"$out\"\nexit 0\n")
                         .string();
    try {
        runCell(prefs);
        ADD_FAILURE() << "a garbage library was accepted";
    } catch (const BackendError& e) {
        EXPECT_NE(std::string(e.what()).find("cannot be used"), std::string::npos) << e.what();
    }
    for (const auto& e : fs::directory_iterator(cache.path))
        EXPECT_NE(e.path().extension(), ".so") << e.path();
    EXPECT_TRUE(tempFiles(cache.path).empty());
}

namespace {
std::vector<fs::path> preludes(const fs::path& dir) {
    std::vector<fs::path> out;
    for (const auto& e : fs::directory_iterator(dir))
        if (e.path().filename().string().find(".prelude.h.gch") != std::string::npos)
            out.push_back(e.path());
    return out;
}
bool compilerIsGcc() {
    const std::string cc = cpu::resolveProgram(cpu::compilerName(""));
    return cpu::precompilesPrelude(cpu::identifyCompiler(cc, {"-O0"}, 30.0));
}
} // namespace

// The standard headers are precompiled once per compiler and flags into the cache and reused by
// every model built with them. A damaged precompiled header never fails a build: GCC passes over
// one it does not recognise, and one it fails to read (a truncated file: "while reading
// precompiled header") is removed and the model compiled without it, then built again.
TEST(CachePrelude, PrecompiledOnceReusedAndADamagedOneIsPassedOver) {
    if (!compilerIsGcc()) GTEST_SKIP() << "the precompiled prelude is built for GCC only";
    TempDir tmp;
    const std::string first = keyOf(runCell(prefsFor(tmp.path)));
    const auto built = preludes(tmp.path);
    ASSERT_EQ(built.size(), 1u);
    const auto stamp = fs::last_write_time(built[0]);
    const std::string second = keyOf(runCell(prefsFor(tmp.path), 0.5));
    ASSERT_NE(first, second); // another library, the same prelude
    EXPECT_EQ(preludes(tmp.path), built);
    EXPECT_EQ(fs::last_write_time(built[0]), stamp);
    EXPECT_TRUE(tempFiles(tmp.path).empty());

    const std::string whole = readAll(built[0]);
    for (const std::string& bytes :
         {std::string("garbage"), whole.substr(0, 4096), whole.substr(0, whole.size() / 2)}) {
        TempDir damaged;
        writeAll(damaged.path / built[0].filename(), bytes);
        writeAll(damaged.path / built[0].stem(), readAll(tmp.path / built[0].stem()));
        EXPECT_FALSE(runCell(prefsFor(damaged.path)).cacheHit) << bytes.size() << " bytes";
        EXPECT_FALSE(runCell(prefsFor(damaged.path), 0.5).cacheHit) << bytes.size() << " bytes";
        EXPECT_TRUE(tempFiles(damaged.path).empty());
    }
}
