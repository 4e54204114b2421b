# cython: language_level=3, boundscheck=False, wraparound=False, initializedcheck=False
"""Regular files read in bulk (Cython, POSIX): the system calls of a whole piece of an archive made without the GIL.

A TRF file is small (a few kB) and its reading is five system calls (stat, open, fstat, read, close), each of
which Python makes with the GIL held around it; reading a piece of 1,000 files that way kept the GIL for most of
10 ms, while the command's other thread waited to compute the previous piece. :func:`read_files` makes the same
calls for every file of a list in one loop without the GIL, into one arena, and then makes the files' bytes;
the stat and the open find each file by name within its directory, opened once for a run of paths in it.

Each file takes the steps of :func:`tbstats.io.safe.read_regular`, its plain-Python reference (the tests read
the same files both ways): ``stat`` (links followed), nothing opened that is not a regular file, an open that
never blocks (``O_NONBLOCK``, ``O_NOCTTY``), ``fstat`` on the descriptor (a FIFO put in the file's place
meanwhile is not read), a first read of the size plus one byte (in reads of at most 1 GiB), then to the end if
the file grew. An interrupted call (``EINTR``) is made again, as Python does. Python strings for the reasons are
made by :mod:`tbstats.io.safe`: this module gives a step and an ``errno`` or a file mode.

A piece's files are held twice for a moment, in the arena and as bytes (about 5 MB for 1,000 files of the mix).
"""

from cpython.bytes cimport PyBytes_FromStringAndSize
from libc.errno cimport EINTR, EINVAL, ENOMEM, errno
from libc.stdlib cimport free, malloc, realloc
from libc.string cimport memcmp, memcpy
from posix.fcntl cimport O_NONBLOCK, O_RDONLY, open, openat
from posix.stat cimport S_ISREG, fstat, fstatat, struct_stat
from posix.unistd cimport close, read

cdef extern from "fcntl.h":
    int O_NOCTTY
    int O_CLOEXEC
    int O_DIRECTORY
    int AT_FDCWD

cdef enum:
    OK = 0
    STAT_FAILED = 1     # stat of the path failed: errno
    NOT_REGULAR = 2     # stat or fstat found no regular file: its mode
    OPEN_FAILED = 3     # errno
    READ_FAILED = 4     # fstat or read failed: errno

#: What the steps are called in the tuples of :func:`read_files` (the enum's values).
STEPS = {STAT_FAILED: "stat", NOT_REGULAR: "kind", OPEN_FAILED: "open", READ_FAILED: "read"}

cdef Py_ssize_t MORE = 1 << 16   # safe._MORE: what a file is read by past its size at open


cdef int _read_one(int at, const char *path, size_t one_read, char **arena, size_t *cap, size_t *used,
                  long *detail) noexcept nogil:
    """Append one file's bytes to the arena; its step (0 when read) and ``detail`` (errno or mode) otherwise.
    ``path`` is relative to the open directory ``at`` (``AT_FDCWD``: as given)."""
    cdef struct_stat st
    cdef int fd, rc
    cdef ssize_t got
    cdef size_t want, size, done, start = used[0]
    cdef char *grown
    while True:
        rc = fstatat(at, path, &st, 0)
        if rc == 0 or errno != EINTR:
            break
    if rc != 0:
        detail[0] = errno
        return STAT_FAILED
    if not S_ISREG(st.st_mode):
        detail[0] = st.st_mode
        return NOT_REGULAR
    while True:
        fd = openat(at, path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC)
        if fd >= 0 or errno != EINTR:
            break
    if fd < 0:
        detail[0] = errno
        return OPEN_FAILED
    rc = fstat(fd, &st)
    if rc != 0:
        detail[0] = errno
        close(fd)
        return READ_FAILED
    if not S_ISREG(st.st_mode):
        detail[0] = st.st_mode
        close(fd)
        return NOT_REGULAR
    size = <size_t>st.st_size
    want = size + 1 if size < one_read else one_read
    while True:
        if used[0] + want > cap[0]:
            while used[0] + want > cap[0]:
                cap[0] *= 2
            grown = <char*>realloc(arena[0], cap[0])
            if grown == NULL:
                detail[0] = ENOMEM
                close(fd)
                used[0] = start
                return READ_FAILED
            arena[0] = grown
        got = read(fd, arena[0] + used[0], want)
        if got < 0:
            if errno == EINTR:
                continue
            detail[0] = errno
            close(fd)
            used[0] = start
            return READ_FAILED
        used[0] += got
        done = used[0] - start
        # a regular file returns less than asked only at its end (asked at most ``one_read``, below the
        # system's cap on one read); past its size at open it grew: read to the end
        if got == 0 or (<size_t>got < want and done <= size):
            break
        want = MORE if done > size else (size + 1 - done if size + 1 - done < one_read else one_read)
    close(fd)
    return OK


cdef int _open_dir(const char *path, Py_ssize_t cut, char *buffer) noexcept nogil:
    """The directory of a path (its bytes before ``cut``, the last slash; ``/`` when that is the first byte) opened
    to find names in (-1 when it cannot be: its files are then found by their whole path)."""
    cdef Py_ssize_t length = cut if cut > 0 else 1
    cdef int fd
    memcpy(buffer, path, length)
    buffer[length] = 0
    while True:
        fd = open(buffer, O_RDONLY | O_DIRECTORY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC)
        if fd >= 0 or errno != EINTR:
            return fd


def read_files(list paths, size_t one_read=1 << 30):
    """The bytes of each file of ``paths`` (bytes, as ``os.fsencode`` gives them), or ``(step, errno or mode)``
    where a step failed (:data:`STEPS`; a path holding a NUL byte, which no system call takes, fails its stat
    with ``EINVAL``). One read asks for at most ``one_read`` bytes (Linux returns at most about 2 GiB from one).

    A run of paths in one directory is read by name within that directory, opened once (``fstatat`` and
    ``openat``: the system does not walk the path's directories again for every file); a path without a
    directory or a name, or whose directory cannot be opened, is taken whole (the same calls, the same errors)."""
    cdef Py_ssize_t n = len(paths), i, longest = 0, c, dir_cut = -1
    cdef char **names = <char**>malloc(max(n, 1) * sizeof(char*))
    cdef Py_ssize_t *cuts = <Py_ssize_t*>malloc(max(n, 1) * sizeof(Py_ssize_t))
    cdef size_t *ends = <size_t*>malloc((max(n, 1)) * sizeof(size_t))
    cdef int *steps = <int*>malloc(max(n, 1) * sizeof(int))
    cdef long *details = <long*>malloc(max(n, 1) * sizeof(long))
    cdef size_t cap = 1 << 20, used = 0
    cdef char *arena = <char*>malloc(cap)
    cdef char *buffer = NULL
    cdef const char *dir_of = NULL   # the path whose directory ``dir_fd`` is (its first ``dir_cut`` bytes)
    cdef int dir_fd = -1
    cdef list out = []
    cdef bytes path
    cdef size_t begin
    if (names == NULL or cuts == NULL or ends == NULL or steps == NULL or details == NULL
            or arena == NULL):
        free(names); free(cuts); free(ends); free(steps); free(details); free(arena)
        raise MemoryError()
    try:
        for i in range(n):
            path = paths[i]
            names[i] = NULL if b"\0" in path else <char*>path   # (the list keeps the bytes alive)
            c = path.rfind(b"/")
            cuts[i] = c if 0 <= c < len(path) - 1 else -1       # a name after the last slash
            longest = max(longest, len(path))
        buffer = <char*>malloc(longest + 2)
        if buffer == NULL:
            raise MemoryError()
        with nogil:
            for i in range(n):
                c = cuts[i]
                if names[i] == NULL:
                    steps[i], details[i] = STAT_FAILED, EINVAL
                else:
                    if c >= 0 and not (dir_of != NULL and c == dir_cut and memcmp(names[i], dir_of, c) == 0):
                        if dir_fd >= 0:   # another directory than the last path's
                            close(dir_fd)
                        dir_fd = _open_dir(names[i], c, buffer)
                        dir_of, dir_cut = names[i], c
                    if c >= 0 and dir_fd >= 0:
                        steps[i] = _read_one(dir_fd, names[i] + c + 1, one_read, &arena, &cap, &used, &details[i])
                    else:
                        steps[i] = _read_one(AT_FDCWD, names[i], one_read, &arena, &cap, &used, &details[i])
                ends[i] = used
            if dir_fd >= 0:
                close(dir_fd)
        begin = 0
        for i in range(n):
            if steps[i] == OK:
                out.append(PyBytes_FromStringAndSize(arena + begin, ends[i] - begin))
            else:
                out.append((STEPS[steps[i]], details[i]))
            begin = ends[i]
        return out
    finally:
        free(names); free(cuts); free(ends); free(steps); free(details); free(arena); free(buffer)
