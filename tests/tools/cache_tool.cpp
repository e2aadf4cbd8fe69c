// ob_cache_tool: drives cache::Storage in a fresh process, for tests that need
// one (the once-per-process warning) or another user (a read-only cache when
// the tests run as root).
//
//   ob_cache_tool [--as-nobody] DIR OP...
//     writable              prints "writable 1" or "writable 0"
//     put KIND KEY DATA     stores metadata "meta:DATA" and file "out" = DATA; prints "put 1|0"
//     get KIND KEY          prints "get hit DATA", "get missing" or "get corrupt PROBLEM"
//     record-hits N         N separate record() calls of one hit each
// Exit 0 after all ops; 2 on bad usage; 77 when --as-nobody cannot drop privileges.
#include <grp.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <string>
#include <vector>

#include "offload_build/storage/storage.hpp"

using namespace ob::storage;

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  size_t i = 0;
  if (i < args.size() && args[i] == "--as-nobody") {
    ++i;
    const gid_t nobody_gid = 65534;
    const uid_t nobody_uid = 65534;
    if (::setgroups(0, nullptr) != 0 || ::setgid(nobody_gid) != 0 || ::setuid(nobody_uid) != 0 ||
        ::geteuid() != nobody_uid) {
      std::perror("ob_cache_tool: cannot become nobody");
      return 77;
    }
  }
  if (i >= args.size()) {
    std::cerr << "usage: ob_cache_tool [--as-nobody] DIR OP...\n";
    return 2;
  }
  Storage storage(args[i++]);
  auto need = [&](size_t n) {
    if (i + n > args.size()) {
      std::cerr << "ob_cache_tool: missing operands\n";
      std::exit(2);
    }
  };
  while (i < args.size()) {
    std::string op = args[i++];
    if (op == "writable") {
      std::cout << "writable " << (storage.writable() ? 1 : 0) << "\n";
    } else if (op == "put") {
      need(3);
      Entry e{"meta:" + args[i + 2], {{"out", args[i + 2]}}};
      std::cout << "put " << (storage.put(args[i], args[i + 1], e) ? 1 : 0) << "\n";
      i += 3;
    } else if (op == "get") {
      need(2);
      Lookup l = storage.get(args[i], args[i + 1]);
      i += 2;
      if (l.status == LookupStatus::Hit)
        std::cout << "get hit " << (l.entry.files.empty() ? "" : l.entry.files[0].data) << "\n";
      else if (l.status == LookupStatus::Missing)
        std::cout << "get missing\n";
      else
        std::cout << "get corrupt " << l.problem << "\n";
    } else if (op == "record-hits") {
      need(1);
      int n = std::stoi(args[i++]);
      Counters one;
      one.hits = 1;
      for (int k = 0; k < n; ++k) storage.record(one);
    } else {
      std::cerr << "ob_cache_tool: unknown op " << op << "\n";
      return 2;
    }
  }
  return 0;
}
