#include "backends/common/cache_entry.hpp"

#include "backends/common/cache_dir.hpp"
#include "backends/common/sha256.hpp"
#include "spikeforge/errors.hpp"

#include <cstdint>
#include <cstdio>
#include <fstream>
#include <optional>
#include <sstream>

namespace fs = std::filesystem;

namespace spikeforge::backends::cache {

namespace {

constexpr size_t kMagicChars = 8;
constexpr size_t kKeyChars = 64;  // SHA-256 in hex
constexpr size_t kSizeChars = 16; // 64-bit size in hex
constexpr size_t kHeaderChars = kMagicChars + kKeyChars + kSizeChars + kKeyChars + 1;

std::string hex64(uint64_t value) {
    char text[kSizeChars + 1];
    std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(value));
    return text;
}

std::optional<uint64_t> parseHex64(const std::string& text) {
    uint64_t value = 0;
    for (const char c : text) {
        int digit = -1;
        if (c >= '0' && c <= '9') digit = c - '0';
        if (c >= 'a' && c <= 'f') digit = c - 'a' + 10;
        if (digit < 0) return std::nullopt;
        value = value << 4 | static_cast<uint64_t>(digit);
    }
    return value;
}

} // namespace

const char* describe(EntryState state) {
    switch (state) {
    case EntryState::Missing:
        return "missing";
    case EntryState::Truncated:
        return "truncated";
    case EntryState::BadHeader:
        return "not a spikeforge cache entry of this kind";
    case EntryState::WrongKey:
        return "an entry of another key";
    case EntryState::BadChecksum:
        return "corrupt (checksum mismatch)";
    case EntryState::Ok:
        return "valid";
    }
    return "unknown";
}

std::string entryBytes(const std::string& magic, const std::string& key,
                       const std::string& payload) {
    return magic + key + hex64(payload.size()) + sha256Hex(payload) + "\n" + payload;
}

EntryState parseEntry(const std::string& bytes, const std::string& magic, const std::string& key,
                      std::string& payload) {
    if (bytes.empty()) return EntryState::Missing;
    if (bytes.size() < kHeaderChars)
        return bytes.compare(0, kMagicChars, magic, 0, std::min(bytes.size(), kMagicChars)) == 0
                   ? EntryState::Truncated
                   : EntryState::BadHeader;
    if (bytes.compare(0, kMagicChars, magic) != 0 || bytes[kHeaderChars - 1] != '\n')
        return EntryState::BadHeader;
    size_t at = kMagicChars;
    if (bytes.compare(at, kKeyChars, key) != 0) return EntryState::WrongKey;
    at += kKeyChars;
    const std::optional<uint64_t> size = parseHex64(bytes.substr(at, kSizeChars));
    if (!size) return EntryState::BadHeader;
    at += kSizeChars;
    const uint64_t have = bytes.size() - kHeaderChars;
    if (have < *size) return EntryState::Truncated;
    if (have > *size) return EntryState::BadHeader; // trailing bytes: not what was written
    std::string body = bytes.substr(kHeaderChars);
    if (sha256Hex(body) != bytes.substr(at, kKeyChars)) return EntryState::BadChecksum;
    payload = std::move(body);
    return EntryState::Ok;
}

EntryState readEntry(const fs::path& path, const std::string& magic, const std::string& key,
                     std::string& payload) {
    std::ifstream in(path, std::ios::binary);
    if (!in) return EntryState::Missing;
    std::ostringstream ss;
    ss << in.rdbuf();
    const std::string bytes = ss.str();
    // An empty file is a truncated entry, not a missing one.
    if (bytes.empty()) return EntryState::Truncated;
    return parseEntry(bytes, magic, key, payload);
}

void publish(const fs::path& dir, const std::string& key, const fs::path& path,
             const std::string& bytes) {
    const fs::path tmp = dir / (tempStem(key) + path.extension().string());
    {
        std::ofstream out(tmp, std::ios::binary);
        out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
        if (!out.flush()) {
            std::error_code ec;
            fs::remove(tmp, ec);
            throw BackendError("cannot write " + tmp.string() + " (compiled-code cache)");
        }
    }
    std::error_code ec;
    fs::rename(tmp, path, ec);
    if (ec) {
        std::error_code ignored;
        fs::remove(tmp, ignored);
        throw BackendError("cannot publish " + path.string() + ": " + ec.message());
    }
}

} // namespace spikeforge::backends::cache
