// Test helper: the fftw backend with side queues that run beside the caller,
// as CUDA streams do. Queue 0 runs work at once in the calling thread; each
// side queue is a worker thread that runs its work in order, each piece after
// a short sleep, so a transport that forgets a queue_wait, a when_done or the
// final join reads or returns data that is not there yet, and its test fails.
// synchronize() waits for queue 0 only, like cudaStreamSynchronize. The
// overlap queue is one more worker, and FFT plans made for it run there, so a
// plan that reshapes a slice before its FFT has finished fails its test too.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "core/testing/forwarding_backend.hpp"

namespace fftune::testing {

class QueuedBackend final : public ForwardingBackend {
public:
    explicit QueuedBackend(int side_queues = 3, std::chrono::microseconds delay = std::chrono::microseconds(300)) {
        for (int i = 0; i <= side_queues; ++i) workers_.push_back(std::make_unique<Worker>(delay));
    }
    std::string name() const override { return "queued"; }
    int queue_count() const override { return static_cast<int>(workers_.size()); }
    int overlap_queue() const override { return static_cast<int>(workers_.size()); }
    std::unique_ptr<FftPlan> make_fft(const FftDescriptor& desc) override {
        auto plan = inner().make_fft(desc);
        if (desc.queue == 0) return plan;
        return std::make_unique<QueuedFft>(std::move(plan), worker(desc.queue));
    }
    void queue_wait(int q, int after) override {
        if (q == after || after == 0) return;  // queue 0's work is done when submitted
        Worker& a = worker(after);
        const long long target = a.submitted();
        if (q == 0) a.wait_for(target);
        else worker(q).push([&a, target] { a.wait_for(target); }, false);
    }
    void copy_region_on(int q, void* d, const StridedRegion& dr, const void* s, const StridedRegion& sr,
                        std::size_t e) override {
        if (q == 0) return copy_region(d, dr, s, sr, e);
        worker(q).push([this, d, dr, s, sr, e] { copy_region(d, dr, s, sr, e); }, true);
    }
    void when_done(int q, std::function<void()> done) override {
        if (q == 0) return done();
        worker(q).push(std::move(done), false);
    }

private:
    class Worker;
    // An FFT plan whose executions run on a worker, in order, each after the delay.
    class QueuedFft final : public FftPlan {
    public:
        QueuedFft(std::unique_ptr<FftPlan> plan, Worker& worker) : plan_(std::move(plan)), worker_(worker) {}
        void execute(void* in, void* out) override {
            worker_.push([p = plan_.get(), in, out] { p->execute(in, out); }, true);
        }
        std::size_t work_bytes() const override { return plan_->work_bytes(); }
        void set_work_area(void* area) override { plan_->set_work_area(area); }

    private:
        std::unique_ptr<FftPlan> plan_;
        Worker& worker_;
    };
    class Worker {
    public:
        explicit Worker(std::chrono::microseconds delay) : delay_(delay), thread_([this] { loop(); }) {}
        ~Worker() {
            {
                std::lock_guard lock(mutex_);
                stop_ = true;
            }
            cv_.notify_all();
            thread_.join();
        }
        void push(std::function<void()> task, bool slow) {
            std::lock_guard lock(mutex_);
            tasks_.push_back({std::move(task), slow});
            ++submitted_;
            cv_.notify_all();
        }
        long long submitted() {
            std::lock_guard lock(mutex_);
            return submitted_;
        }
        void wait_for(long long target) {
            std::unique_lock lock(mutex_);
            cv_.wait(lock, [&] { return completed_ >= target; });
        }

    private:
        void loop() {
            std::unique_lock lock(mutex_);
            for (;;) {
                cv_.wait(lock, [&] { return stop_ || !tasks_.empty(); });
                if (tasks_.empty()) return;  // stop_ with nothing left
                auto [task, slow] = std::move(tasks_.front());
                tasks_.pop_front();
                lock.unlock();
                if (slow) std::this_thread::sleep_for(delay_);
                task();
                lock.lock();
                ++completed_;
                cv_.notify_all();
            }
        }
        std::chrono::microseconds delay_;
        std::mutex mutex_;
        std::condition_variable cv_;
        std::deque<std::pair<std::function<void()>, bool>> tasks_;
        long long submitted_ = 0, completed_ = 0;
        bool stop_ = false;
        std::thread thread_;  // last: starts after the members it uses
    };
    Worker& worker(int q) { return *workers_.at(static_cast<std::size_t>(q - 1)); }
    std::vector<std::unique_ptr<Worker>> workers_;
};

}  // namespace fftune::testing
