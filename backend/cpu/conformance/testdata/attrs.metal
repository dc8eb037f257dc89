#include <metal_stdlib>
using namespace metal;

// attrs records every thread-position attribute, in a mix of declared
// types, 24 words per thread at its linear grid position.
kernel void attrs(device uint* out [[buffer(0)]],
                  uint3 tpg [[thread_position_in_grid]],
                  ushort3 tptg [[thread_position_in_threadgroup]],
                  uint2 tgpg [[threadgroup_position_in_grid]],
                  uint3 tptgs [[threads_per_threadgroup]],
                  uint3 tgspg [[threadgroups_per_grid]],
                  uint3 grid [[threads_per_grid]],
                  ushort tiitg [[thread_index_in_threadgroup]],
                  uint lane [[thread_index_in_simdgroup]],
                  uint sg [[simdgroup_index_in_threadgroup]],
                  uint sgs [[simdgroups_per_threadgroup]],
                  uint tpsg [[threads_per_simdgroup]],
                  uint width [[thread_execution_width]],
                  uint qlane [[thread_index_in_quadgroup]],
                  int qg [[quadgroup_index_in_threadgroup]],
                  uint qgs [[quadgroups_per_threadgroup]])
{
    uint linear = (tpg.z * grid.y + tpg.y) * grid.x + tpg.x;
    device uint* o = out + linear * 24;
    o[0] = tpg.x;
    o[1] = tpg.y;
    o[2] = tpg.z;
    o[3] = tptg.x;
    o[4] = tptg.y;
    o[5] = tptg.z;
    o[6] = tgpg.x;
    o[7] = tgpg.y;
    o[8] = tptgs.x;
    o[9] = tptgs.y;
    o[10] = tptgs.z;
    o[11] = tgspg.x;
    o[12] = tgspg.y;
    o[13] = tgspg.z;
    o[14] = grid.x;
    o[15] = grid.y;
    o[16] = grid.z;
    o[17] = tiitg;
    o[18] = lane;
    o[19] = sg;
    o[20] = sgs;
    o[21] = tpsg;
    o[22] = width;
    o[23] = qlane | (uint(qg) << 8) | (qgs << 16);
}
