#include "core/engine/kept_arrays.hpp"

#include <algorithm>
#include <exception>
#include <stdexcept>

#include <fmt/format.h>

#include "core/base/registry.hpp"

namespace fftune {

KeptArrays& KeptArrays::instance() {
    static auto* kept = new KeptArrays;  // never destroyed: nothing to free after MPI and CUDA end
    return *kept;
}

KeptArrays::Job::Job(MPI_Comm comm) : comm_(comm), unwinding_(std::uncaught_exceptions()) {
    instance().in_job_ = true;
}

KeptArrays::Job::~Job() {
    KeptArrays& k = instance();
    k.in_job_ = false;
    // A job left by an exception may have left its peers elsewhere: no
    // collective call then; its process ends, and its memory with it.
    if (std::uncaught_exceptions() > unwinding_) return;
    try {
        k.release(comm_);
    } catch (...) {
    }
}

std::size_t KeptArrays::kept_bytes() const {
    std::size_t b = 0;
    for (const Entry& e : entries_)
        if (!e.what.host) b += e.what.bytes;
    return b;
}

std::size_t KeptArrays::prepare(MPI_Comm comm, const std::string& backend, const std::vector<ArrayRequest>& wanted) {
    const bool holds = !entries_.empty() || !mappings_.empty();
    const bool lent = std::any_of(entries_.begin(), entries_.end(), [](const Entry& e) { return e.lent; });
    int same_ranks = MPI_UNEQUAL;
    if (holds && comm_.get() != MPI_COMM_NULL) MPI_Comm_compare(comm, comm_.get(), &same_ranks);
    const bool foreign = holds && same_ranks != MPI_IDENT && same_ranks != MPI_CONGRUENT;
    std::string error;
    if (lent) error = "kept arrays are still lent to a live plan (one plan at a time may keep its arrays)";
    else if (foreign) error = "kept arrays belong to another set of ranks than this plan's";
    if (auto e = agree_error(comm, error)) throw std::logic_error(*e);

    bool same = holds && backend == backend_name_ && entries_.size() == wanted.size();
    for (std::size_t i = 0; same && i < wanted.size(); ++i) same = entries_[i].what == wanted[i];
    reuse_ = all_ok(comm, same);
    if (reuse_) {
        std::size_t reused = 0;
        for (const ArrayRequest& w : wanted)
            if (!w.host) reused += w.bytes;
        return reused;
    }
    release(comm);
    if (backend != backend_name_) owner_.reset();
    backend_name_ = backend;
    comm_ = Communicator::duplicate(comm);
    return 0;
}

std::vector<Buffer> KeptArrays::take(const std::vector<ArrayRequest>& wanted) {
    if (!reuse_) {
        if (!entries_.empty()) throw std::logic_error("KeptArrays::take: arrays kept that prepare did not let go");
        if (!wanted.empty() && !owner_) owner_ = Registry<Backend>::instance().create(backend_name_);
    }
    std::vector<Buffer> out;
    out.reserve(wanted.size());
    for (std::size_t i = 0; i < wanted.size(); ++i) {
        if (!reuse_) {
            // One byte at least, as Buffer allocates, so that every entry has an address.
            const std::size_t n = std::max<std::size_t>(wanted[i].bytes, 1);
            void* p = wanted[i].bytes == 0 ? nullptr : wanted[i].host ? owner_->allocate_host(n) : owner_->allocate(n);
            entries_.push_back(Entry{wanted[i], p, false});
        }
        Entry& e = entries_[i];
        if (!e.ptr) {
            out.emplace_back();
            continue;
        }
        e.lent = true;
        out.emplace_back(e.ptr, e.what.bytes, [this, i] { entries_[i].lent = false; });
    }
    reuse_ = false;  // the next plan asks again
    return out;
}

void KeptArrays::hold_mappings(const std::vector<std::shared_ptr<const void>>& mappings) {
    for (const auto& m : mappings)
        if (m) mappings_.insert(m);
}

void KeptArrays::free_entries() {
    for (Entry& e : entries_) {
        if (e.lent) throw std::logic_error("KeptArrays: letting go of an array a live plan holds");
        if (!e.ptr) continue;
        if (e.what.host) owner_->deallocate_host(e.ptr);
        else owner_->deallocate(e.ptr);
    }
    entries_.clear();
}

void KeptArrays::release(MPI_Comm comm) {
    const bool holds = !entries_.empty() || !mappings_.empty();
    if (!all_ok(comm, !holds)) {
        mappings_.clear();  // this rank's mappings of peers' arrays closed...
        FFTUNE_MPI_CHECK(MPI_Barrier(comm));  // ...on every rank, before any of them is freed
        free_entries();
    }
    comm_ = Communicator();
    reuse_ = false;
}

}  // namespace fftune
