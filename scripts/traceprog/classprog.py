"""classprog.py: classprog's "run" mode with pyopencl (Debian's python3-pyopencl), the most used OpenCL
binding, whose extension module links libOpenCL in a local scope. Usage: python3 classprog.py run SIZE N.
It prints what classprog prints: "first failure: index I code C", and "classprog: done" on stderr."""
import sys

import pyopencl as cl


def main():
    if len(sys.argv) != 4 or sys.argv[1] != "run":
        print("usage: classprog.py run SIZE N", file=sys.stderr)
        return 2
    size, n = int(sys.argv[2], 0), int(sys.argv[3], 0)
    devices = cl.get_platforms()[0].get_devices()
    ctx = cl.Context(devices)
    over = max(d.max_mem_alloc_size for d in devices) + 1
    kept = []
    for i in range(n + 1):
        try:
            kept.append(cl.Buffer(ctx, cl.mem_flags.READ_WRITE, size if i < n else over))
        except cl.Error as e:
            print("first failure: index %d code %d" % (i, e.code))
            break
    else:
        print("no failure after %d buffers" % n)
    print("classprog: done", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
