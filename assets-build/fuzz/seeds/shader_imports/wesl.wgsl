import package::lib::color::{tint, shade as s};
import super::util::f;
#import "shaders/common.wgsl"
#import bevy_pbr::mesh_functions
#ifdef X
fn a() {}
#endif
