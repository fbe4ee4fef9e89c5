// Reads the key NGen reads first (mscorsvc's RootList::GetRootArray enumerates it): it lists the roots under
// HKLM\SOFTWARE\Microsoft\.NETFramework\v2.0.50727\NGenService\Roots, in the 64-bit view, and reads the ImageList
// of the write-up's corrupt root by its name (not NGen's code: the value's format is undocumented). Run between the
// registry fixture's apply and restore, it shows the program really sees the machine state the fixture set up:
//   bug: the root C:/AnyNameWillDo.dll with ImageList = 00 69 00 6f (NgenCorrupt.reg)
//   fix: NGenService without its Roots key (NgenCorrupt.reg made it, Microsoft support's workaround removed Roots)
// Usage: ngen_fixture_read bug|fix. Exit 0 and "REPRO-REACHED fixture seen: ..." when the state is the variant's.
#include <windows.h>
#include <cstdio>
#include <string>
#include <vector>

static const wchar_t kService[] = L"SOFTWARE\\Microsoft\\.NETFramework\\v2.0.50727\\NGenService";
static const wchar_t kRoots[] = L"SOFTWARE\\Microsoft\\.NETFramework\\v2.0.50727\\NGenService\\Roots";
static const wchar_t kRoot[] = L"SOFTWARE\\Microsoft\\.NETFramework\\v2.0.50727\\NGenService\\Roots\\C:/AnyNameWillDo.dll\\0";

static std::string Hex(const std::vector<BYTE>& bytes) {
  std::string out;
  char b[4];
  for (size_t i = 0; i < bytes.size(); i++) {
    std::snprintf(b, sizeof b, "%s%02x", i ? " " : "", bytes[i]);
    out += b;
  }
  return out;
}

int wmain(int argc, wchar_t** argv) {
  // The start line: a run that ends without it never reached this program (the cell's startMarker).
  std::printf("REPRO-STARTED ngen_fixture_read\n");
  std::fflush(stdout);
  if (argc != 2 || (std::wstring(argv[1]) != L"bug" && std::wstring(argv[1]) != L"fix")) {
    std::fprintf(stderr, "usage: ngen_fixture_read bug|fix\n");
    return 2;
  }
  const bool bug = std::wstring(argv[1]) == L"bug";
  HKEY roots = nullptr;
  LSTATUS st = RegOpenKeyExW(HKEY_LOCAL_MACHINE, kService, 0, KEY_READ | KEY_WOW64_64KEY, &roots);
  if (st != ERROR_SUCCESS) {
    std::printf("REPRO-MISMATCH no NGenService key (%ld): the fixture was not applied\n", (long)st);
    return 1;
  }
  RegCloseKey(roots);
  st = RegOpenKeyExW(HKEY_LOCAL_MACHINE, kRoots, 0, KEY_READ | KEY_WOW64_64KEY, &roots);
  if (st == ERROR_FILE_NOT_FOUND) {
    std::printf("Roots: absent\n");
    if (bug) { std::printf("REPRO-MISMATCH bug expects the corrupt root, but there is no Roots key\n"); return 1; }
    std::printf("REPRO-REACHED fixture seen: NGenService without Roots\nREPRO-DONE\n");
    return 0;
  }
  if (st != ERROR_SUCCESS) { std::printf("REPRO-MISMATCH RegOpenKeyEx(Roots) failed: %ld\n", (long)st); return 1; }
  DWORD subkeys = 0;
  RegQueryInfoKeyW(roots, nullptr, nullptr, nullptr, &subkeys, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr);
  RegCloseKey(roots);
  std::printf("Roots: %lu root(s)\n", (unsigned long)subkeys);
  if (!bug) { std::printf("REPRO-MISMATCH fix expects no Roots key\n"); return 1; }

  DWORD type = 0, size = 0;
  st = RegGetValueW(HKEY_LOCAL_MACHINE, kRoot, L"ImageList", RRF_RT_ANY | RRF_SUBKEY_WOW6464KEY, &type, nullptr, &size);
  if (st != ERROR_SUCCESS) { std::printf("REPRO-MISMATCH no ImageList under C:/AnyNameWillDo.dll\\0: %ld\n", (long)st); return 1; }
  std::vector<BYTE> data(size);
  st = RegGetValueW(HKEY_LOCAL_MACHINE, kRoot, L"ImageList", RRF_RT_ANY | RRF_SUBKEY_WOW6464KEY, &type, data.data(), &size);
  if (st != ERROR_SUCCESS) { std::printf("REPRO-MISMATCH reading ImageList failed: %ld\n", (long)st); return 1; }
  data.resize(size);
  const std::string hex = Hex(data);
  std::printf("C:/AnyNameWillDo.dll\\0 ImageList: type %lu (REG_BINARY is 3), %lu bytes: %s\n", (unsigned long)type,
              (unsigned long)size, hex.c_str());
  if (type != REG_BINARY || hex != "00 69 00 6f") {
    std::printf("REPRO-MISMATCH bug expects REG_BINARY 00 69 00 6f\n");
    return 1;
  }
  std::printf("REPRO-REACHED fixture seen: ImageList = %s\nREPRO-DONE\n", hex.c_str());
  return 0;
}
