#include "offload_build/toolchain/runtime_libs.hpp"

#include <elf.h>

#include <cstring>
#include <fstream>

#include "offload_build/util/strings.hpp"

namespace ob::toolchain {

namespace {

// Reads `n` bytes at `offset`; false past the end.
bool read_at(std::ifstream& in, uint64_t offset, void* out, size_t n) {
  in.clear();
  in.seekg(static_cast<std::streamoff>(offset));
  in.read(static_cast<char*>(out), static_cast<std::streamsize>(n));
  return static_cast<size_t>(in.gcount()) == n;
}

// At most this many dynamic entries and this long a name: a hostile file costs nothing.
constexpr size_t kMaxDynamic = 4096;
constexpr size_t kMaxName = 4096;
constexpr size_t kMaxSections = 4096;
constexpr size_t kMaxEntryNames = 16u << 20;

// The ELF64 little-endian header of `in`; nullopt for anything else.
std::optional<Elf64_Ehdr> elf_header(std::ifstream& in) {
  Elf64_Ehdr eh{};
  if (!in || !read_at(in, 0, &eh, sizeof eh) || std::memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 ||
      eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_ident[EI_DATA] != ELFDATA2LSB)
    return std::nullopt;
  return eh;
}

}  // namespace

std::vector<std::string> needed_libraries(const fs::path& program) {
  std::vector<std::string> out;
  std::ifstream in(program, std::ios::binary);
  const auto header = elf_header(in);
  if (!header || header->e_phentsize != sizeof(Elf64_Phdr)) return out;
  const Elf64_Ehdr& eh = *header;
  std::vector<Elf64_Phdr> ph(std::min<size_t>(eh.e_phnum, 256));
  if (ph.empty() || !read_at(in, eh.e_phoff, ph.data(), ph.size() * sizeof(Elf64_Phdr))) return out;
  // The dynamic section, and the file offset of a virtual address (for DT_STRTAB).
  const Elf64_Phdr* dyn = nullptr;
  for (const auto& p : ph)
    if (p.p_type == PT_DYNAMIC) dyn = &p;
  if (!dyn) return out;
  auto file_offset = [&](uint64_t vaddr) -> std::optional<uint64_t> {
    for (const auto& p : ph)
      if (p.p_type == PT_LOAD && vaddr >= p.p_vaddr && vaddr < p.p_vaddr + p.p_filesz) return vaddr - p.p_vaddr + p.p_offset;
    return std::nullopt;
  };
  std::vector<Elf64_Dyn> entries(std::min<size_t>(dyn->p_filesz / sizeof(Elf64_Dyn), kMaxDynamic));
  if (entries.empty() || !read_at(in, dyn->p_offset, entries.data(), entries.size() * sizeof(Elf64_Dyn))) return out;
  std::optional<uint64_t> strtab;
  for (const auto& d : entries) {
    if (d.d_tag == DT_NULL) break;
    if (d.d_tag == DT_STRTAB) strtab = file_offset(d.d_un.d_ptr);
  }
  if (!strtab) return out;
  for (const auto& d : entries) {
    if (d.d_tag == DT_NULL) break;
    if (d.d_tag != DT_NEEDED) continue;
    std::string name(kMaxName, '\0');
    in.clear();
    in.seekg(static_cast<std::streamoff>(*strtab + d.d_un.d_val));
    in.read(name.data(), static_cast<std::streamsize>(name.size()));
    name.resize(std::strlen(name.c_str()));
    if (!name.empty()) out.push_back(std::move(name));
  }
  return out;
}

std::optional<fs::path> runtime_library_dir(const fs::path& program, const std::vector<fs::path>& roots) {
  std::string runtime;
  for (const auto& lib : needed_libraries(program))
    if (util::starts_with(lib, "libomptarget.so")) runtime = lib;
  if (runtime.empty()) return std::nullopt;
  std::error_code ec;
  for (const auto& root : roots)
    if (fs::exists(root / "lib" / runtime, ec)) return root / "lib";
  return std::nullopt;
}

std::optional<std::set<std::string>> offload_entry_names(const fs::path& program) {
  std::ifstream in(program, std::ios::binary);
  const auto eh = elf_header(in);
  if (!eh || eh->e_shentsize != sizeof(Elf64_Shdr) || eh->e_shnum == 0 || eh->e_shstrndx >= eh->e_shnum)
    return std::nullopt;
  std::vector<Elf64_Shdr> sh(std::min<size_t>(eh->e_shnum, kMaxSections));
  if (!read_at(in, eh->e_shoff, sh.data(), sh.size() * sizeof(Elf64_Shdr)) || eh->e_shstrndx >= sh.size())
    return std::nullopt;
  const Elf64_Shdr& names = sh[eh->e_shstrndx];
  constexpr std::string_view kSection = ".llvm.rodata.offloading";
  for (const auto& s : sh) {
    char name[kSection.size() + 1] = {};
    if (s.sh_name >= names.sh_size || !read_at(in, names.sh_offset + s.sh_name, name, std::min<uint64_t>(sizeof name, names.sh_size - s.sh_name)))
      continue;
    if (std::string_view(name, strnlen(name, sizeof name)) != kSection || s.sh_type == SHT_NOBITS) continue;
    if (s.sh_size > kMaxEntryNames) return std::nullopt;
    std::string bytes(s.sh_size, '\0');
    if (!read_at(in, s.sh_offset, bytes.data(), bytes.size())) return std::nullopt;
    std::set<std::string> out;
    for (const auto& n : util::split(bytes, '\0'))
      if (!n.empty()) out.insert(n);
    return out;
  }
  return std::nullopt;
}

}  // namespace ob::toolchain
