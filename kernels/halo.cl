// One time step of the halo-exchange check (clmemprobe exchange). Each device owns a slab of `cells`
// values; `left` and `right` hold the `halo` cells next to the slab on either side, produced by the
// neighbours in the previous step (zeros at the ends of the domain). The update is integer arithmetic so
// the host can compute the exact same numbers: any halo value that arrives late or stale changes cells.
__kernel void halo_step(__global const uint *src, __global const uint *left, __global const uint *right,
                   __global uint *dst, __global uint *edge_left, __global uint *edge_right,
                   uint cells, uint halo, uint t)
{
    uint i = get_global_id(0);
    if (i >= cells)
        return;
    uint v = src[i] * 3u + t;
    for (uint k = 1; k <= halo; k++) {
        uint a = (i >= k) ? src[i - k] : left[halo - (k - i)];
        uint b = (i + k < cells) ? src[i + k] : right[i + k - cells];
        v += (a ^ (b * 7u)) + k;
    }
    dst[i] = v;
    if (i < halo)
        edge_left[i] = v;
    if (i >= cells - halo)
        edge_right[i - (cells - halo)] = v;
}
