// Checkpoints (fit.hpp, docs/training.md "Checkpoints"). One file, checkpoint.sfck:
//   "spikeforge checkpoint\n"  magic (22 bytes)
//   u32 format version
//   u32 next epoch, u64 shuffle seed, f64 learning rate, f64 learning-rate decay
//   (version 2 on) u32 plateau patience, f64 plateau factor, f64 best loss, u32 epochs seen,
//   u32 epochs since the best, u32 halvings (FitOptions::plateauPatience, PlateauState),
//   u32 flags (bit 0: FitOptions::blend)
//   u32 array count, then per array: u32 name length, name, u64 byte count, bytes
//   u64 FNV-1a hash of everything before it
// Integers little-endian, doubles as their IEEE-754 bits; the state arrays are the compiler's
// saveState() bytes as they are (a checkpoint is read back on a machine of the same byte order).
#include "spikeforge/errors.hpp"
#include "spikeforge/train/fit.hpp"

#include <bit>
#include <cstring>
#include <system_error>

namespace spikeforge::train {

namespace {

namespace fs = std::filesystem;

constexpr std::string_view kMagic = "spikeforge checkpoint\n";
constexpr uint32_t kVersion = 2;
constexpr uint32_t kOldestVersion = 1; // read as plateau rule off
const std::string kTempSuffix = ".tmp";

uint64_t fnv1a(std::string_view bytes) {
    uint64_t h = 0xcbf29ce484222325ULL;
    for (const char c : bytes) {
        h ^= static_cast<unsigned char>(c);
        h *= 0x100000001b3ULL;
    }
    return h;
}

class Writer {
public:
    void bytes(std::string_view b) { m_data.append(b); }
    template <class T> void integer(T value) {
        for (size_t i = 0; i < sizeof(T); i++)
            m_data.push_back(static_cast<char>((uint64_t(value) >> (8 * i)) & 0xff));
    }
    void real(double value) { integer(std::bit_cast<uint64_t>(value)); }
    std::string& data() { return m_data; }

private:
    std::string m_data;
};

class Parser {
public:
    Parser(std::string_view data, const fs::path& file) : m_data(data), m_file(file) {}
    std::string_view bytes(uint64_t n) {
        if (n > m_data.size() - m_pos) fail("truncated (it ends inside its data)");
        const std::string_view out = m_data.substr(m_pos, n);
        m_pos += n;
        return out;
    }
    template <class T> T integer() {
        const std::string_view b = bytes(sizeof(T));
        uint64_t v = 0;
        for (size_t i = 0; i < sizeof(T); i++)
            v |= uint64_t(static_cast<unsigned char>(b[i])) << (8 * i);
        return static_cast<T>(v);
    }
    double real() { return std::bit_cast<double>(integer<uint64_t>()); }
    size_t position() const { return m_pos; }
    size_t remaining() const { return m_data.size() - m_pos; }
    [[noreturn]] void fail(const std::string& what) const {
        throw ModelError("checkpoint '" + m_file.string() + "': " + what);
    }

private:
    std::string_view m_data;
    const fs::path& m_file;
    size_t m_pos = 0;
};

bool isOurs(const std::string& name) {
    const std::string file = Checkpoint::kFileName;
    return name == file || name == file + kTempSuffix;
}

void loadInto(EventPropCompiler& compiler, const fs::path& file,
              const std::vector<EventPropCompiler::StateArray>& state) {
    try {
        compiler.loadState(state);
    } catch (const ModelError& e) {
        throw ModelError("checkpoint '" + file.string() +
                         "' does not fit this network: " + e.what());
    }
}

} // namespace

void writeCheckpoint(const fs::path& file, const CheckpointInfo& info,
                     const std::vector<EventPropCompiler::StateArray>& state) {
    Writer w;
    w.bytes(kMagic);
    w.integer<uint32_t>(kVersion);
    w.integer<uint32_t>(info.nextEpoch);
    w.integer<uint64_t>(info.shuffleSeed);
    w.real(info.learningRate);
    w.real(info.learningRateDecay);
    w.integer<uint32_t>(info.plateauPatience);
    w.real(info.plateauFactor);
    w.real(info.plateau.best);
    w.integer<uint32_t>(info.plateau.epochs);
    w.integer<uint32_t>(info.plateau.sinceBest);
    w.integer<uint32_t>(info.plateau.halvings);
    w.integer<uint32_t>(info.blend ? 1u : 0u);
    w.integer<uint32_t>(static_cast<uint32_t>(state.size()));
    for (const auto& a : state) {
        w.integer<uint32_t>(static_cast<uint32_t>(a.name.size()));
        w.bytes(a.name);
        w.integer<uint64_t>(a.bytes.size());
        w.bytes({reinterpret_cast<const char*>(a.bytes.data()), a.bytes.size()});
    }
    w.integer<uint64_t>(fnv1a(w.data()));

    // A crash while writing leaves the temporary file, never half a checkpoint under the name.
    const fs::path tmp = file.string() + kTempSuffix;
    {
        std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
        out.write(w.data().data(), static_cast<std::streamsize>(w.data().size()));
        if (!out.flush()) throw ModelError("checkpoint '" + tmp.string() + "' cannot be written");
    }
    std::error_code ec;
    fs::rename(tmp, file, ec);
    if (ec)
        throw ModelError("checkpoint '" + file.string() + "' cannot be written: " + ec.message());
}

std::pair<CheckpointInfo, std::vector<EventPropCompiler::StateArray>>
readCheckpoint(const fs::path& file) {
    std::ifstream in(file, std::ios::binary);
    if (!in) throw ModelError("checkpoint '" + file.string() + "' cannot be read (missing?)");
    const std::string data{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
    Parser p(data, file);
    if (data.size() < kMagic.size() || p.bytes(kMagic.size()) != kMagic)
        p.fail("not a spikeforge checkpoint (wrong header)");
    const auto version = p.integer<uint32_t>();
    if (version < kOldestVersion || version > kVersion)
        p.fail("format version " + std::to_string(version) + ", this build reads versions " +
               std::to_string(kOldestVersion) + " to " + std::to_string(kVersion));
    CheckpointInfo info;
    info.nextEpoch = p.integer<uint32_t>();
    info.shuffleSeed = p.integer<uint64_t>();
    info.learningRate = p.real();
    info.learningRateDecay = p.real();
    if (version >= 2) {
        info.plateauPatience = p.integer<uint32_t>();
        info.plateauFactor = p.real();
        info.plateau.best = p.real();
        info.plateau.epochs = p.integer<uint32_t>();
        info.plateau.sinceBest = p.integer<uint32_t>();
        info.plateau.halvings = p.integer<uint32_t>();
        const auto flags = p.integer<uint32_t>();
        if (flags > 1u) p.fail("unknown flags " + std::to_string(flags));
        info.blend = (flags & 1u) != 0;
    }
    const uint32_t count = p.integer<uint32_t>();
    std::vector<EventPropCompiler::StateArray> state; // no reserve: `count` is not checked yet
    for (uint32_t i = 0; i < count; i++) {
        EventPropCompiler::StateArray a;
        a.name = std::string(p.bytes(p.integer<uint32_t>()));
        const std::string_view bytes = p.bytes(p.integer<uint64_t>());
        a.bytes.assign(bytes.begin(), bytes.end());
        state.push_back(std::move(a));
    }
    const size_t hashed = p.position();
    const uint64_t stored = p.integer<uint64_t>();
    if (p.remaining() != 0 || stored != fnv1a(std::string_view(data).substr(0, hashed)))
        p.fail("damaged (its checksum does not match its contents)");
    return {info, std::move(state)};
}

bool prepareCheckpointDir(const fs::path& dir) {
    std::error_code ec;
    if (!fs::exists(dir, ec)) {
        fs::create_directories(dir, ec);
        if (ec)
            throw ModelError("checkpoint directory '" + dir.string() +
                             "' cannot be created: " + ec.message());
        return false;
    }
    if (!fs::is_directory(dir, ec))
        throw ModelError("checkpoint directory '" + dir.string() + "' is not a directory");
    for (const auto& entry : fs::directory_iterator(dir, ec))
        if (!isOurs(entry.path().filename().string()))
            throw ModelError("checkpoint directory '" + dir.string() + "' holds '" +
                             entry.path().filename().string() +
                             "', which is not a spikeforge checkpoint; use an empty or new "
                             "directory");
    if (ec)
        throw ModelError("checkpoint directory '" + dir.string() +
                         "' cannot be read: " + ec.message());
    return fs::exists(dir / Checkpoint::kFileName, ec);
}

Checkpoint::Checkpoint(EventPropCompiler& compiler, fs::path dir, uint32_t everyEpochs,
                       const FitOptions& options)
    : m_compiler(compiler), m_dir(std::move(dir)), m_every(everyEpochs), m_options(options) {
    if (m_every == 0) throw ModelError("checkpoint interval must be >= 1 epoch");
    prepareCheckpointDir(m_dir);
}

void Checkpoint::onTrainBegin(uint32_t, uint32_t epochs) {
    m_lastEpoch = epochs == 0 ? 0 : epochs - 1;
}

void Checkpoint::onEpochEnd(const EpochReport& report) {
    if ((report.epoch + 1) % m_every != 0 && report.epoch != m_lastEpoch) return;
    CheckpointInfo info{report.epoch + 1,
                        m_options.shuffleSeed,
                        m_options.learningRate,
                        m_options.learningRateDecay,
                        m_options.plateauPatience,
                        m_options.plateauFactor,
                        report.plateau,
                        m_options.blend};
    writeCheckpoint(m_dir / kFileName, info, m_compiler.saveState());
}

ResumePoint resumeFromCheckpoint(EventPropCompiler& compiler, const fs::path& dir,
                                 const FitOptions& options) {
    const fs::path file = dir / Checkpoint::kFileName;
    auto [info, state] = readCheckpoint(file);
    auto mismatch = [&](const std::string& what, const std::string& saved, const std::string& now) {
        throw ModelError("checkpoint '" + file.string() + "' was written with " + what + " " +
                         saved + ", this run has " + now +
                         "; resuming would not repeat the interrupted run");
    };
    if (info.shuffleSeed != options.shuffleSeed)
        mismatch("shuffle seed", std::to_string(info.shuffleSeed),
                 std::to_string(options.shuffleSeed));
    if (info.learningRate != options.learningRate)
        mismatch("learning rate", std::to_string(info.learningRate),
                 std::to_string(options.learningRate));
    if (info.learningRateDecay != options.learningRateDecay)
        mismatch("learning rate decay", std::to_string(info.learningRateDecay),
                 std::to_string(options.learningRateDecay));
    if (info.plateauPatience != options.plateauPatience)
        mismatch("plateau patience", std::to_string(info.plateauPatience),
                 std::to_string(options.plateauPatience));
    if (info.plateauPatience != 0 && info.plateauFactor != options.plateauFactor)
        mismatch("plateau factor", std::to_string(info.plateauFactor),
                 std::to_string(options.plateauFactor));
    if (info.blend != options.blend)
        mismatch("blending", info.blend ? "on" : "off", options.blend ? "on" : "off");
    if (info.nextEpoch > options.epochs)
        throw ModelError("checkpoint '" + file.string() + "' is after epoch " +
                         std::to_string(info.nextEpoch) + ", past the " +
                         std::to_string(options.epochs) + " epochs of this run");
    loadInto(compiler, file, state);
    return {info.nextEpoch, info.plateau};
}

CheckpointInfo loadCheckpoint(EventPropCompiler& compiler, const fs::path& dir) {
    const fs::path file = dir / Checkpoint::kFileName;
    auto [info, state] = readCheckpoint(file);
    loadInto(compiler, file, state);
    return info;
}

} // namespace spikeforge::train
