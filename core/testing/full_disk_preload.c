// LD_PRELOAD fault hook for the write-error tests (core/run/sweep_write_error_test.sh):
// a file whose path contains $FFTUNE_TEST_FULL_DISK_PATH holds at most
// $FFTUNE_TEST_FULL_DISK_BYTES bytes, as on a full disk: a write past that
// is cut short, and the next one fails with ENOSPC. Every process of the run
// (the launcher, mpirun, the ranks) inherits it through the environment.
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <unistd.h>

// Bytes the file open as `fd` may still grow by; -1 when it is not limited.
static long long room(int fd) {
    const char* pattern = getenv("FFTUNE_TEST_FULL_DISK_PATH");
    const char* bytes = getenv("FFTUNE_TEST_FULL_DISK_BYTES");
    if (!pattern || !*pattern || !bytes) return -1;
    char link[64], path[4096];
    snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    const ssize_t n = readlink(link, path, sizeof path - 1);
    if (n <= 0) return -1;
    path[n] = '\0';
    if (!strstr(path, pattern)) return -1;
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) return -1;
    const long long limit = atoll(bytes);
    return st.st_size >= limit ? 0 : limit - st.st_size;
}

ssize_t write(int fd, const void* buf, size_t count) {
    static ssize_t (*real_write)(int, const void*, size_t);
    if (!real_write) real_write = (ssize_t(*)(int, const void*, size_t))dlsym(RTLD_NEXT, "write");
    const long long r = room(fd);
    if (r == 0 && count > 0) {
        errno = ENOSPC;
        return -1;
    }
    if (r > 0 && (unsigned long long)r < count) count = (size_t)r;
    return real_write(fd, buf, count);
}

// libstdc++'s streams write large blocks with writev: the same limit, piece by piece.
ssize_t writev(int fd, const struct iovec* iov, int iovcnt) {
    static ssize_t (*real_writev)(int, const struct iovec*, int);
    if (!real_writev) real_writev = (ssize_t(*)(int, const struct iovec*, int))dlsym(RTLD_NEXT, "writev");
    if (room(fd) < 0) return real_writev(fd, iov, iovcnt);
    ssize_t total = 0;
    for (int i = 0; i < iovcnt; ++i) {
        if (iov[i].iov_len == 0) continue;
        const ssize_t n = write(fd, iov[i].iov_base, iov[i].iov_len);
        if (n < 0) return total > 0 ? total : -1;
        total += n;
        if ((size_t)n < iov[i].iov_len) break;
    }
    return total;
}
