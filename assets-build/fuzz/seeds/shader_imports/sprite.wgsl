#include "common.wgsl"

@fragment
fn fs_main(@location(0) uv: vec2<f32>) -> @location(0) vec4<f32> {
    return textureSample(atlas, atlas_sampler, uv) * tint;
}
