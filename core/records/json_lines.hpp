// Line-by-line reading of JSON-lines files, plain or gzip-compressed: results
// under results/ are committed as .jsonl.gz, and ingest, tune --compare and
// the sweep read either. Compression is recognised by the file's magic bytes
// (1f 8b), not its name. Decompression needs zlib at build time; without it a
// compressed file fails with a message that says so, never as empty input.
#pragma once

#include <functional>
#include <string>
#include <string_view>

namespace fftune {

// True when this build reads gzip-compressed files (it found zlib).
bool gzip_supported();

// Calls `line` for each line (without its '\n'; a last line without one
// counts); the view is valid during the call only. `path` is read once, front
// to back, so a pipe works too. Returns false, calling nothing, when `path`
// cannot be opened. Throws std::runtime_error naming `path` on a read error, a
// corrupt or cut-off compressed stream, or a compressed file in a build
// without zlib.
bool for_each_line(const std::string& path, const std::function<void(std::string_view)>& line);

}  // namespace fftune
