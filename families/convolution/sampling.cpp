#include "families/convolution/sampling.hpp"

#include <algorithm>
#include <stdexcept>

#include "core/run/testcase_parser.hpp"

namespace fftune::convolution {

const std::vector<SamplingScheme>& sampling_schemes() {
    // fine: the adjacent cells at full resolution, then every 2nd and 4th point;
    // coarse: every 2nd point next to the source, then the 4th and the 8th (the
    // paper's r = 2 near the sub-domain, 8 farther, 16-32 beyond, at small grids).
    static const std::vector<SamplingScheme> s{
        {"full", 4, {1}}, {"fine", 4, {1, 2, 4}}, {"coarse", 4, {2, 4, 8}}};
    return s;
}
std::vector<std::string> sampling_names() {
    std::vector<std::string> out;
    for (const auto& s : sampling_schemes()) out.push_back(s.name);
    return out;
}
const SamplingScheme& sampling_scheme(const std::string& name) {
    for (const auto& s : sampling_schemes())
        if (s.name == name) return s;
    throw std::invalid_argument("unknown sampling '" + name + "' (allowed: " + TestcaseParser::list(sampling_names()) +
                                ")");
}

std::vector<index_t> sample_coords(index_t lo, index_t hi, index_t s) {
    std::vector<index_t> c;
    for (index_t i = lo; i < hi; i += s) c.push_back(i);
    if (!c.empty() && c.back() != hi - 1) c.push_back(hi - 1);
    return c;
}

std::size_t Cell::samples() const {
    std::size_t n = 1;
    for (int a = 0; a < 3; ++a) n *= sample_coords(box.lo[a], box.hi[a], rate).size();
    return n;
}

std::vector<Cell> tile(const Box3& region, const Box3& source, const SamplingScheme& s) {
    std::vector<Cell> out;
    const index_t b = s.cell;
    for (index_t i = region.lo[0]; i < region.hi[0]; i += b)
        for (index_t j = region.lo[1]; j < region.hi[1]; j += b)
            for (index_t l = region.lo[2]; l < region.hi[2]; l += b) {
                Cell c;
                c.box = {{i, j, l},
                         {std::min(i + b, region.hi[0]), std::min(j + b, region.hi[1]), std::min(l + b, region.hi[2])}};
                // Planes strictly between the cell and the source along axis 0.
                const index_t gap = c.box.lo[0] >= source.hi[0]   ? c.box.lo[0] - source.hi[0]
                                    : source.lo[0] >= c.box.hi[0] ? source.lo[0] - c.box.hi[0]
                                                                  : 0;
                const std::size_t level = std::size_t(gap / b);
                c.rate = s.rates[std::min(level, s.rates.size() - 1)];
                out.push_back(c);
            }
    return out;
}

std::size_t sample_count(const std::vector<Cell>& cells) {
    std::size_t n = 0;
    for (const auto& c : cells) n += c.samples();
    return n;
}

void sample(const std::vector<Cell>& cells, const std::function<double(index_t, index_t, index_t)>& value,
            std::vector<double>& out) {
    for (const auto& c : cells) {
        const auto xs = sample_coords(c.box.lo[0], c.box.hi[0], c.rate), ys = sample_coords(c.box.lo[1], c.box.hi[1], c.rate),
                   zs = sample_coords(c.box.lo[2], c.box.hi[2], c.rate);
        for (index_t x : xs)
            for (index_t y : ys)
                for (index_t z : zs) out.push_back(value(x, y, z));
    }
}

namespace {
// Point p between samples c[k] and c[k+1]: k and the weight of c[k+1].
void bracket(const std::vector<index_t>& c, index_t p, std::size_t& k, double& t) {
    k = 0;
    while (k + 1 < c.size() && c[k + 1] <= p) ++k;
    if (k + 1 >= c.size()) {  // the last sample (or the only one)
        k = c.size() >= 2 ? c.size() - 2 : 0;
        t = c.size() >= 2 ? 1.0 : 0.0;
        return;
    }
    t = double(p - c[k]) / double(c[k + 1] - c[k]);
}
}  // namespace

void interpolate_add(const std::vector<Cell>& cells, const double* samples, const Box3& region, double* out) {
    const index_t ny = region.extent(1), nz = region.extent(2);
    for (const auto& c : cells) {
        const std::vector<index_t> a[3] = {sample_coords(c.box.lo[0], c.box.hi[0], c.rate),
                                           sample_coords(c.box.lo[1], c.box.hi[1], c.rate),
                                           sample_coords(c.box.lo[2], c.box.hi[2], c.rate)};
        const std::size_t sy = a[1].size(), sz = a[2].size();
        auto at = [&](std::size_t i, std::size_t j, std::size_t l) { return samples[(i * sy + j) * sz + l]; };
        for (index_t x = c.box.lo[0]; x < c.box.hi[0]; ++x) {
            std::size_t i;
            double tx;
            bracket(a[0], x, i, tx);
            for (index_t y = c.box.lo[1]; y < c.box.hi[1]; ++y) {
                std::size_t j;
                double ty;
                bracket(a[1], y, j, ty);
                for (index_t z = c.box.lo[2]; z < c.box.hi[2]; ++z) {
                    std::size_t l;
                    double tz;
                    bracket(a[2], z, l, tz);
                    double v = 0;
                    for (int di = 0; di < 2; ++di)
                        for (int dj = 0; dj < 2; ++dj)
                            for (int dl = 0; dl < 2; ++dl) {
                                const double w = (di ? tx : 1 - tx) * (dj ? ty : 1 - ty) * (dl ? tz : 1 - tz);
                                if (w != 0) v += w * at(i + di, j + dj, l + dl);
                            }
                    out[((x - region.lo[0]) * ny + (y - region.lo[1])) * nz + (z - region.lo[2])] += v;
                }
            }
        }
        samples += c.samples();
    }
}

}  // namespace fftune::convolution
