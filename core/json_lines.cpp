#include "core/json_lines.hpp"

#include <array>
#include <cstdio>
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

bool starts_with_gzip_magic(std::FILE* f) {
    unsigned char magic[2] = {0, 0};
    const bool gz = std::fread(magic, 1, 2, f) == 2 && magic[0] == 0x1f && magic[1] == 0x8b;
    std::rewind(f);
    return gz;
}

}  // namespace

bool gzip_supported() {
#ifdef FFTUNE_HAVE_ZLIB
    return true;
#else
    return false;
#endif
}

bool for_each_line(const std::string& path, const std::function<void(std::string_view)>& line) {
    std::unique_ptr<std::FILE, int (*)(std::FILE*)> f(std::fopen(path.c_str(), "rb"), &std::fclose);
    if (!f) return false;
    if (!starts_with_gzip_magic(f.get())) {
        split_lines([&](char* p, std::size_t n) {
            const std::size_t got = std::fread(p, 1, n, f.get());
            if (got == 0 && std::ferror(f.get())) throw std::runtime_error(path + ": read error");
            return got;
        }, line);
        return true;
    }
#ifdef FFTUNE_HAVE_ZLIB
    f.reset();
    std::unique_ptr<gzFile_s, int (*)(gzFile)> gz(gzopen(path.c_str(), "rb"), &gzclose);
    if (!gz) return false;
    split_lines([&](char* p, std::size_t n) {
        const int got = gzread(gz.get(), p, static_cast<unsigned>(n));
        int err = Z_OK;
        const char* msg = gzerror(gz.get(), &err);
        // zlib reports a stream cut off before its trailer as Z_BUF_ERROR.
        if (got < 0 || (err != Z_OK && err != Z_STREAM_END))
            throw std::runtime_error(path + ": corrupt or cut-off gzip data (" + msg + ")");
        return static_cast<std::size_t>(got);
    }, line);
    return true;
#else
    throw std::runtime_error(path + ": gzip-compressed, and this fftune was built without zlib "
                                    "(install zlib's headers and rebuild, or gunzip the file first)");
#endif
}

}  // namespace fftune
