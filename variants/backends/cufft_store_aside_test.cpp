// The store-aside callback's division (fftune_divide) against integer division,
// over the output extents fftune's stages have and every size up to 2^32.
#include "variants/backends/cufft_store_aside.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <vector>

namespace {

TEST(StoreAside, DivisionByReciprocalIsExact) {
    std::vector<unsigned> divisors;
    for (unsigned d = 1; d <= 1100; ++d) divisors.push_back(d);
    for (unsigned d : {2049u, 4097u, 512u * 513u, 1024u * 513u, 2048u * 1025u, 65535u, 65537u, 1u << 20, 4294967295u})
        divisors.push_back(d);
    std::mt19937_64 rng(29);
    long long checked = 0;
    for (unsigned d : divisors) {
        const double inv = 1.0 / d;
        std::vector<unsigned> ns{0u, 1u, d - 1, d, 4294967295u, 4294967294u};
        // Around multiples of d, where a quotient off by one would show.
        for (int k = 0; k < 64; ++k) {
            const std::uint64_t q = rng() % (4294967295ull / d + 1);
            for (long long delta : {-1LL, 0LL, 1LL}) {
                const long long n = static_cast<long long>(q * d) + delta;
                if (n >= 0 && n <= 4294967295LL) ns.push_back(static_cast<unsigned>(n));
            }
            ns.push_back(static_cast<unsigned>(rng()));
        }
        for (unsigned n : ns) {
            ASSERT_EQ(fftune_divide(n, d, inv), n / d) << n << " / " << d;
            ++checked;
        }
    }
    EXPECT_GT(checked, 200000);
}

}  // namespace
