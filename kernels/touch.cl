// touch writes every byte of a buffer so that a runtime which allocates on first use must place it on the
// device the kernel runs on. The value depends on the index so that no runtime can skip the writes.
__kernel void touch(__global uchar *buf, uint seed)
{
    size_t i = get_global_id(0);
    buf[i] = (uchar)(seed ^ (uint)i);
}
