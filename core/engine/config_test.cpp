#include "core/engine/config.hpp"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace fftune {
namespace {

TEST(Config, KeyNamesEveryChoice) {
    Config c{"fftw", "pencil", LayoutVariant::realigned, {2, 3}, {"a2a_sync", "p2p_streams"}, false};
    EXPECT_EQ(c.key(), "fftw/pencil/realigned/2x3/a2a_sync+p2p_streams/host");
    c.gpu_aware = true;
    EXPECT_EQ(c.key(), "fftw/pencil/realigned/2x3/a2a_sync+p2p_streams/gpu_aware");
    c.overlap = 4;
    EXPECT_EQ(c.key(), "fftw/pencil/realigned/2x3/a2a_sync+p2p_streams/gpu_aware/overlap4");
    c.fft_stores_kept = true;
    EXPECT_EQ(c.key(), "fftw/pencil/realigned/2x3/a2a_sync+p2p_streams/gpu_aware/overlap4/kept_by_fft");
    c.overlap_slices = SliceSchedule::tapered;
    EXPECT_EQ(c.key(), "fftw/pencil/realigned/2x3/a2a_sync+p2p_streams/gpu_aware/overlap4/tapered/kept_by_fft");
    c.exchange_parts = 2;
    EXPECT_EQ(c.key(), "fftw/pencil/realigned/2x3/a2a_sync+p2p_streams/gpu_aware/overlap4/tapered/parts2/kept_by_fft");
    c.overlap = 1;  // one slice: nothing to taper, no exchange beside an FFT to part
    EXPECT_EQ(c.key(), "fftw/pencil/realigned/2x3/a2a_sync+p2p_streams/gpu_aware/kept_by_fft");
}

TEST(Config, JsonRoundTrip) {
    const Config c{"fftw", "slab_1d2d", LayoutVariant::default_, {4, 1}, {"p2p_mpi_type"}, true};
    const Config back = nlohmann::json(c).get<Config>();
    EXPECT_EQ(back.key(), c.key());
    EXPECT_FALSE(nlohmann::json(c).contains("overlap"));  // records without overlap read as before
    Config o = c;
    o.overlap = 3;
    EXPECT_EQ(nlohmann::json(o).get<Config>().overlap, 3);
    EXPECT_FALSE(nlohmann::json(c).contains("fft_stores_kept"));
    o.fft_stores_kept = true;
    EXPECT_TRUE(nlohmann::json(o).get<Config>().fft_stores_kept);
    EXPECT_FALSE(nlohmann::json(o).contains("overlap_slices"));  // even: as before
    o.overlap_slices = SliceSchedule::tapered;
    EXPECT_EQ(nlohmann::json(o).at("overlap_slices"), "tapered");
    EXPECT_EQ(nlohmann::json(o).get<Config>().overlap_slices, SliceSchedule::tapered);
    EXPECT_FALSE(nlohmann::json(o).contains("exchange_parts"));  // 1: as before
    o.exchange_parts = 3;
    EXPECT_EQ(nlohmann::json(o).at("exchange_parts"), 3);
    EXPECT_EQ(nlohmann::json(o).get<Config>().exchange_parts, 3);
    nlohmann::json bad = o;
    bad["overlap_slices"] = "ragged";
    EXPECT_THROW(bad.get<Config>(), std::invalid_argument);
    const Problem p{"fft3d", {9, 10, 11}, Precision::single, Direction::inverse, 3};
    const nlohmann::json j = p;
    EXPECT_EQ(j.at("precision"), "single");
    const Problem q = j.get<Problem>();
    EXPECT_EQ(q.size, p.size);
    EXPECT_EQ(q.direction, Direction::inverse);
    EXPECT_EQ(q.ranks, 3);
}

TEST(Names, ParseRejectsUnknownWithAllowedList) {
    EXPECT_EQ(parse<Precision>("double"), Precision::double_);
    try {
        parse<LayoutVariant>("sideways");
        FAIL();
    } catch (const std::invalid_argument& e) {
        EXPECT_STREQ(e.what(), "unknown layout 'sideways' (allowed: default, realigned)");
    }
    EXPECT_EQ(size_string({64, 32, 16}), "64x32x16");
    EXPECT_EQ(complex_bytes(Precision::single), 8u);
}

}  // namespace
}  // namespace fftune
