#include "core/records/json_lines.hpp"

#include <array>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <stdexcept>

#ifdef FFTUNE_HAVE_ZLIB
#include <zlib.h>
#endif

namespace fftune {
namespace {

constexpr std::size_t chunk = 1 << 16;

// Splits a byte stream into lines; `read` fills a buffer and returns the
// count, 0 at the end.
template <class Read>
void split_lines(Read read, const std::function<void(std::string_view)>& line) {
    std::array<char, chunk> buf;
    std::string pending;  // the part of a line that crosses a chunk boundary
    for (std::size_t n; (n = read(buf.data(), buf.size())) > 0;) {
        std::string_view rest(buf.data(), n);
        for (std::size_t eol; (eol = rest.find('\n')) != std::string_view::npos; rest.remove_prefix(eol + 1)) {
            if (pending.empty()) {
                line(rest.substr(0, eol));
            } else {
                pending.append(rest.substr(0, eol));
                line(pending);
                pending.clear();
            }
        }
        pending.append(rest);
    }
    if (!pending.empty()) line(pending);
}

}  // namespace

bool gzip_supported() {
#ifdef FFTUNE_HAVE_ZLIB
    return true;
#else
    return false;
#endif
}

// Read once, front to back, so that pipes work too (no seek back after
// looking at the magic bytes).
bool for_each_line(const std::string& path, const std::function<void(std::string_view)>& line) {
#ifdef FFTUNE_HAVE_ZLIB
    // gzread passes data that is not gzip through unchanged.
    std::unique_ptr<gzFile_s, int (*)(gzFile)> gz(gzopen(path.c_str(), "rb"), &gzclose);
    if (!gz) return false;
    split_lines([&](char* p, std::size_t n) {
        const int got = gzread(gz.get(), p, static_cast<unsigned>(n));
        int err = Z_OK;
        const char* msg = gzerror(gz.get(), &err);
        if (err == Z_ERRNO) throw std::runtime_error(path + ": read error (" + std::strerror(errno) + ")");
        // zlib reports a stream cut off before its trailer as Z_BUF_ERROR; its
        // message starts with the path, which ours names already.
        if (got < 0 || (err != Z_OK && err != Z_STREAM_END)) {
            std::string why = msg ? msg : "zlib error";
            if (why.starts_with(path + ": ")) why.erase(0, path.size() + 2);
            throw std::runtime_error(path + ": corrupt or cut-off gzip data (" + why + ")");
        }
        return static_cast<std::size_t>(got);
    }, line);
    return true;
#else
    std::unique_ptr<std::FILE, int (*)(std::FILE*)> f(std::fopen(path.c_str(), "rb"), &std::fclose);
    if (!f) return false;
    bool first = true;
    split_lines([&](char* p, std::size_t n) {
        const std::size_t got = std::fread(p, 1, n, f.get());
        if (got == 0 && std::ferror(f.get()))
            throw std::runtime_error(path + ": read error (" + std::strerror(errno) + ")");
        if (first && got >= 2 && static_cast<unsigned char>(p[0]) == 0x1f && static_cast<unsigned char>(p[1]) == 0x8b)
            throw std::runtime_error(path + ": gzip-compressed, and this fftune was built without zlib "
                                            "(install zlib's headers and rebuild, or gunzip the file first)");
        first = false;
        return got;
    }, line);
    return true;
#endif
}

}  // namespace fftune
