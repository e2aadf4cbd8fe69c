// rustc's MIR as rust_mir.hpp reads it (lines as the nightly writes them), and
// the launch check on what it read.
#include <algorithm>

#include <catch2/catch.hpp>

#include "offload_build/toolchain/frontends/rust_mir.hpp"

using namespace ob;
using namespace ob::toolchain::rust;
using Catch::Matchers::Contains;
using Catch::Matchers::StartsWith;

namespace {

const manifest::Target kHost{"x86_64-unknown-linux-gnu", "generic"};
const manifest::Target kSm90{"nvptx64-nvidia-cuda", "sm_90"};

// A device pass's MIR (abridged): a kernel, a method, a panic handler.
const char* kDevice = R"(// WARNING: This output format is intended for human consumers only
fn panic(_1: &PanicInfo<'_>) -> ! {
    let mut _0: !;
}

fn bump_u32(_1: *mut u8, _2: *mut [u32; 64]) -> () {
    debug _dyn_ptr => _1;
}

fn device_panic::<impl at src/main.rs:72:5: 72:24>::write_str(_1: &mut Line, _2: &str) -> Result<(), core::fmt::Error> {
}

fn twice(_1: *mut u8, _2: *mut [u32; 64]) -> () {
}
)";

// A host pass's MIR with spans: three launches, one in the const_ comments (not a launch).
const char* kHostMir = R"(fn main() -> () {
        _2 = offload::<unsafe extern "C" fn(*mut [u32; crate::N]) {host::bump_u32}, (*mut [u32; 64],), ()>(host::bump_u32, copy _3, copy _3, move _4) -> [return: bb1, unwind unreachable]; // scope 1 at src/main.rs:44:5: 44:95
                                         // + const_: Const { ty: fn(unsafe extern "C" fn(*mut [u32; crate::N]) {host::bump_u32}, [u32; 3], [u32; 3], (*mut [u32; 64],)) {offload::<unsafe extern "C" fn(*mut [u32; crate::N]) {host::bump_u32}, (*mut [u32; 64],), ()>}, val: Value(offload::<unsafe extern "C" fn(*mut [u32; crate::N]) {host::bump_u32}, (*mut [u32; 64],), ()>) }
        _6 = offload::<unsafe extern "C" fn(*const [u32; 64]) {host::twice}, (*const [u32; 64],), ()>(host::twice, copy _3, copy _3, move _7) -> [return: bb2, unwind unreachable]; // scope 1 at src/main.rs:45:5: 45:100
        _0 = offload::<unsafe extern "C" fn(*const [f32; 1], *const [f32; N], *mut [f32; N]) {saxpy}, (*const [f32; 1], *const [f32; 1024], *mut [f32; 1024]), ()>(saxpy, copy _4, move _4, move _5) -> [return: bb1, unwind unreachable]; // scope 0 at /abs/dir:x/src/main.rs:46:5: 46:104
        _1 = my::offload::<u32>(copy _2) -> [return: bb3, unwind continue]; // scope 0 at src/main.rs:50:5: 50:20
}
)";

DeviceImage image_of(const manifest::Target& t, std::set<std::string> symbols) {
  return DeviceImage{t, std::move(symbols), parse_mir(kDevice).functions};
}

}  // namespace

TEST_CASE("MIR: functions with their evaluated parameter types, launches with their spans", "[rust][mir]") {
  const Mir device = parse_mir(kDevice);
  REQUIRE(device.functions.size() == 4);
  CHECK(device.functions[1].name == "bump_u32");
  CHECK(device.functions[1].params == std::vector<std::string>{"*mut u8", "*mut [u32; 64]"});
  CHECK(device.functions[2].name == "write_str");
  CHECK(device.functions[2].params == std::vector<std::string>{"&mut Line", "&str"});
  CHECK(device.launches.empty());

  const Mir host = parse_mir(kHostMir);
  REQUIRE(host.launches.size() == 3);  // not the const_ comment, not my::offload
  CHECK(host.launches[0].path == "host::bump_u32");
  CHECK(host.launches[0].kernel == "bump_u32");
  CHECK(host.launches[0].args == std::vector<std::string>{"*mut [u32; 64]"});
  CHECK(host.launches[0].file == "src/main.rs");
  CHECK(host.launches[0].line == 44);
  CHECK(host.launches[0].column == 5);
  CHECK(host.launches[2].args ==
        std::vector<std::string>{"*const [f32; 1]", "*const [f32; 1024]", "*mut [f32; 1024]"});
  CHECK(host.launches[2].file == "/abs/dir:x/src/main.rs");
  CHECK(host.launches[2].line == 46);
  CHECK(split_types("A, (B, C), [D; 2], fn() -> (), X<Y, Z>") ==
        std::vector<std::string>{"A", "(B, C)", "[D; 2]", "fn() -> ()", "X<Y, Z>"});
}

TEST_CASE("launch check: a kernel no image has, a read-only argument written, another type", "[rust][mir]") {
  Mir host = parse_mir(kHostMir);
  host.launches.pop_back();  // saxpy: not in these images
  const auto images = std::vector<DeviceImage>{image_of(kHost, {"bump_u32", "twice", "memcpy"})};
  auto r = check_launches({host}, images, "offload_device");
  REQUIRE_FALSE(r.ok());
  // twice takes *mut and is launched with *const: the one problem.
  CHECK(r.error().message ==
        "src/main.rs:45:5: error: argument 1 of this launch of `twice` is `*const [u32; 64]`, read-only, but the "
        "kernel (host device image) takes `*mut [u32; 64]` and may write through it: the runtime copies a read-only "
        "argument to the device and never back, so what the kernel writes would be lost; pass (and declare) it as "
        "`*mut [u32; 64]`");

  host.launches.pop_back();
  CHECK(check_launches({host}, images, "offload_device").ok());

  // A target whose image lacks the kernel: named with the kernels it has.
  auto gpu = check_launches({host}, {images[0], image_of(kSm90, {"twice"})}, "offload_device");
  REQUIRE_FALSE(gpu.ok());
  CHECK_THAT(gpu.error().message,
             Contains("src/main.rs:44:5: error: this launch of `host::bump_u32` finds no kernel `bump_u32` in the "
                      "sm_90 device image, which defines `twice`") &&
                 Contains("under #[cfg(offload_device)]"));

  // Two kernel crates' images for one target: found in either.
  CHECK(check_launches({host}, {image_of(kHost, {"bump_u32"}), image_of(kHost, {"twice"})}, "offload_device").ok());

  Mir typed = host;
  typed.launches[0].args = {"*mut [f32; 64]"};
  auto t = check_launches({typed}, images, "offload_device");
  REQUIRE_FALSE(t.ok());
  CHECK_THAT(t.error().message, Contains("argument 1 of this launch of `bump_u32` is `*mut [f32; 64]` where the "
                                         "kernel (host device image) takes `*mut [u32; 64]`"));
  typed.launches[0].args = {"*mut [u32; 64]", "*const u32"};
  CHECK_THAT(check_launches({typed}, images, "offload_device").error().message,
             Contains("kernel `bump_u32` (host device image) takes 2 parameter(s) and this launch passes 2"));
  typed.launches[0].args = {"&'a mut [u32; 64]"};  // a reference is as good as a pointer
  CHECK(check_launches({typed}, images, "offload_device").ok());
}

TEST_CASE("launch check: a host declaration renamed by #[link_name], by the program's offload entries",
          "[rust][mir]") {
  Mir host = parse_mir(kHostMir);
  host.launches.resize(2);  // bump_u32, twice
  // The device pass's kernel is `bump_u32_v2` (#[no_mangle] on a fn of that name).
  auto images = std::vector<DeviceImage>{image_of(kHost, {"bump_u32_v2", "twice", "memcpy"})};
  for (auto& f : images[0].functions)
    if (f.name == "bump_u32") f.name = "bump_u32_v2";
  // Without the entries, by the path's last segment: bump_u32 is missing.
  CHECK_THAT(check_launches({host}, images, "offload_device").error().message,
             Contains("finds no kernel `bump_u32`"));
  host.launches[1].args = {"*mut [u32; 64]"};  // twice fits
  // The program launches bump_u32_v2 (host::bump_u32's #[link_name]) and twice: found, and its types compared.
  CHECK(check_launches({host}, images, "offload_device", std::set<std::string>{"bump_u32_v2", "twice"}).ok());
  Mir typed = host;
  typed.launches[0].args = {"*mut [f32; 64]"};
  CHECK_THAT(check_launches({typed}, images, "offload_device", std::set<std::string>{"bump_u32_v2", "twice"})
                 .error()
                 .message,
             Contains("argument 1 of this launch of `bump_u32` is `*mut [f32; 64]` where the kernel (host device "
                      "image) takes"));
  // A renamed symbol no image defines: refused at the launch, naming the symbol.
  auto missing = check_launches({host}, images, "offload_device", std::set<std::string>{"bump_u32_v3", "twice"});
  REQUIRE_FALSE(missing.ok());
  CHECK(std::count(missing.error().message.begin(), missing.error().message.end(), '\n') == 0);
  CHECK_THAT(missing.error().message,
             Contains("src/main.rs:44:5: error: this launch of `host::bump_u32` is of a renamed symbol (the program "
                      "launches no `bump_u32`; #[link_name]), and the program launches `bump_u32_v3`, which the host "
                      "device image does not define"));
  // A plain launch of a missing kernel is still its own error, not a rename's.
  auto plain = check_launches({host}, {image_of(kHost, {"bump_u32"})}, "offload_device",
                              std::set<std::string>{"bump_u32", "twice"});
  REQUIRE_FALSE(plain.ok());
  CHECK_THAT(plain.error().message, StartsWith("src/main.rs:45:5: error: this launch of `host::twice` finds no kernel "
                                                "`twice` in the host device image"));
  // A launch the program has no entry for and no renamed symbol left (not compiled in): nothing to fail at run time.
  CHECK(check_launches({host}, {image_of(kHost, {"twice"})}, "offload_device", std::set<std::string>{"twice"}).ok());
}

// Lines as the nightly writes a launch through generic functions: the
// launcher in one crate (its kernel its parameter F), a forwarder and the
// calls naming kernels in another.
TEST_CASE("launch check: a launch inside a generic function, at each call naming its kernel, through a forwarder",
          "[rust][mir]") {
  const char* lib = R"(fn launch_with(_1: F, _2: &mut [u32; 64]) -> () {
        _0 = offload::<F, (*mut [u32; 64],), ()>(copy _1, move _3, move _4, move _5) -> [return: bb1, unwind unreachable]; // scope 0 at kern/src/lib.rs:6:5: 6:78
}
)";
  const char* app = R"(fn outer(_1: K, _2: &mut [u32; 64]) -> () {
        _0 = kern::launch_with::<K>(copy _1, copy _2) -> [return: bb1, unwind unreachable]; // scope 0 at src/main.rs:3:5: 3:22
}
fn main() -> () {
        _1 = kern::launch_with::<unsafe extern "C" fn(*mut [u32; 64]) {host::bump_u32}>(host::bump_u32, copy _2) -> [return: bb1, unwind unreachable]; // scope 0 at src/main.rs:8:5: 8:30
        _3 = outer::<unsafe extern "C" fn(*mut [u32; 64]) {host::missing}>(move _4, copy _2) -> [return: bb2, unwind unreachable]; // scope 0 at src/main.rs:9:5: 9:25
}
)";
  std::vector<Mir> host{parse_mir(lib), parse_mir(app)};
  REQUIRE(host[0].launches.size() == 1);
  CHECK(host[0].launches[0].via == "F");
  CHECK(host[0].launches[0].in_fn == "launch_with");
  resolve_generic_launches(host);
  REQUIRE(host[1].launches.size() == 2);  // at the calls naming them, in the calling crate
  CHECK(host[1].launches[0].path == "host::bump_u32");  // the call's argument
  CHECK(host[1].launches[0].line == 8);
  CHECK(host[1].launches[1].path == "host::missing");  // the one fn item among the type arguments, through outer
  CHECK(host[1].launches[1].line == 9);
  CHECK(host[1].launches[1].generic);
  const auto images = std::vector<DeviceImage>{image_of(kHost, {"bump_u32", "twice"})};
  auto r = check_launches(host, images, "offload_device");
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().message.rfind("src/main.rs:9:5: error: this launch of `host::missing` finds no kernel `missing`", 0) == 0);
  host[1].launches.pop_back();
  CHECK(check_launches(host, images, "offload_device").ok());
}
