// The write-up's run, on a real Windows machine with the .NET Framework 4 (64-bit): in the folder of System's native
// image, `ngen.exe createpdb System.ni.dll <dir>`. With NgenCorrupt.reg applied, mscorsvc deserializes the corrupt
// ImageList in an endless loop of allocations (1.4 GB/s on the write-up's machine, which froze). So ngen runs in a
// Job Object with a process and job memory limit well below the machine's memory, and is killed with the job.
// While it runs: its commit (PrivateUsage) every 100 ms; procdump.exe, when on PATH (or CORPUS_PROCDUMP), takes the
// write-up's captures of ngen itself (-s 1 -n 3 -ma, and a commit trigger -m at half the cap); cdb.exe, when on PATH
// (or CORPUS_CDB), prints the first dump's stack, where the bug shows
// mscorsvc!Configuration::BinaryDeSerializeLogicalImageList.
// Usage: ngen_createpdb bug|fix <cap MB> <max seconds> [<growth GB/s that counts>]
// Prints REPRO-UNSUPPORTED (exit 3) when ngen.exe or System's native image is missing.
#include <windows.h>
#include <psapi.h>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <string>
#include <vector>

static std::wstring Env(const wchar_t* name) {
  wchar_t buf[32768];
  DWORD n = GetEnvironmentVariableW(name, buf, 32768);
  return n > 0 && n < 32768 ? std::wstring(buf, n) : std::wstring();
}

static bool IsFile(const std::wstring& p) {
  DWORD a = GetFileAttributesW(p.c_str());
  return a != INVALID_FILE_ATTRIBUTES && !(a & FILE_ATTRIBUTE_DIRECTORY);
}

static std::wstring Which(const wchar_t* env, const wchar_t* exe) {
  std::wstring given = Env(env);
  if (!given.empty()) return IsFile(given) ? given : std::wstring();
  wchar_t buf[MAX_PATH];
  return SearchPathW(nullptr, exe, nullptr, MAX_PATH, buf, nullptr) ? std::wstring(buf) : std::wstring();
}

static std::string Narrow(const std::wstring& w) {
  int n = WideCharToMultiByte(CP_UTF8, 0, w.c_str(), -1, nullptr, 0, nullptr, nullptr);
  std::string s(n > 0 ? n - 1 : 0, '\0');
  if (n > 1) WideCharToMultiByte(CP_UTF8, 0, w.c_str(), -1, &s[0], n, nullptr, nullptr);
  return s;
}

static HANDLE Start(const std::wstring& exe, std::wstring cmd, const std::wstring& dir, DWORD flags, HANDLE out,
                    HANDLE* thread) {
  STARTUPINFOW si{};
  si.cb = sizeof si;
  if (out) {
    si.dwFlags = STARTF_USESTDHANDLES;
    si.hStdOutput = si.hStdError = out;
    si.hStdInput = GetStdHandle(STD_INPUT_HANDLE);
  }
  PROCESS_INFORMATION pi{};
  if (!CreateProcessW(exe.c_str(), &cmd[0], nullptr, nullptr, out != nullptr, flags, nullptr,
                      dir.empty() ? nullptr : dir.c_str(), &si, &pi))
    return nullptr;
  if (thread) *thread = pi.hThread; else CloseHandle(pi.hThread);
  return pi.hProcess;
}

int wmain(int argc, wchar_t** argv) {
  if (argc < 4) {
    std::fprintf(stderr, "usage: ngen_createpdb bug|fix <cap MB> <max seconds> [<growth GB/s>]\n");
    return 2;
  }
  const unsigned long long capMB = wcstoull(argv[2], nullptr, 10);
  const double maxSeconds = wcstod(argv[3], nullptr);
  const double growthGBps = argc > 4 ? wcstod(argv[4], nullptr) : 1.0;
  const std::wstring windir = Env(L"WINDIR");
  const std::wstring ngen = windir + L"\\Microsoft.NET\\Framework64\\v4.0.30319\\ngen.exe";
  if (windir.empty() || !IsFile(ngen)) {
    std::printf("REPRO-UNSUPPORTED no %s: ngen.exe comes with the .NET Framework 4 (64-bit), which is not installed\n",
                Narrow(ngen).c_str());
    return 3;
  }
  // C:\Windows\assembly\NativeImages_v4.0.30319_64\System\<hash>\System.ni.dll
  const std::wstring images = windir + L"\\assembly\\NativeImages_v4.0.30319_64\\System\\";
  std::wstring imageDir;
  WIN32_FIND_DATAW fd;
  HANDLE find = FindFirstFileW((images + L"*").c_str(), &fd);
  for (BOOL more = find != INVALID_HANDLE_VALUE; more && imageDir.empty(); more = FindNextFileW(find, &fd))
    if ((fd.dwFileAttributes & FILE_ATTRIBUTE_DIRECTORY) && fd.cFileName[0] != L'.' &&
        IsFile(images + fd.cFileName + L"\\System.ni.dll"))
      imageDir = images + fd.cFileName;
  if (find != INVALID_HANDLE_VALUE) FindClose(find);
  if (imageDir.empty()) {
    std::printf("REPRO-UNSUPPORTED no native image of System under %s (ngen has not compiled it here)\n", Narrow(images).c_str());
    return 3;
  }
  wchar_t cwd[MAX_PATH];
  GetCurrentDirectoryW(MAX_PATH, cwd);
  const std::wstring out = std::wstring(cwd) + L"\\pdb", dumps = std::wstring(cwd) + L"\\dumps";
  CreateDirectoryW(out.c_str(), nullptr);
  CreateDirectoryW(dumps.c_str(), nullptr);

  // The cap: a process and a job memory limit (commit), and everything killed when this program's handle closes.
  HANDLE job = CreateJobObjectW(nullptr, nullptr);
  JOBOBJECT_EXTENDED_LIMIT_INFORMATION limit{};
  limit.BasicLimitInformation.LimitFlags =
      JOB_OBJECT_LIMIT_PROCESS_MEMORY | JOB_OBJECT_LIMIT_JOB_MEMORY | JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE;
  limit.ProcessMemoryLimit = limit.JobMemoryLimit = (SIZE_T)(capMB << 20);
  if (!job || !SetInformationJobObject(job, JobObjectExtendedLimitInformation, &limit, sizeof limit)) {
    std::printf("REPRO-ERROR cannot set up the job's memory cap: %lu\n", GetLastError());
    return 4;
  }
  HANDLE thread = nullptr;
  HANDLE proc = Start(ngen, L"\"" + ngen + L"\" createpdb System.ni.dll \"" + out + L"\"", imageDir, CREATE_SUSPENDED,
                      nullptr, &thread);
  if (!proc) { std::printf("REPRO-ERROR cannot start ngen.exe: %lu\n", GetLastError()); return 4; }
  if (!AssignProcessToJobObject(job, proc)) {
    TerminateProcess(proc, 1);
    std::printf("REPRO-ERROR cannot put ngen.exe in the job: %lu\n", GetLastError());
    return 4;
  }
  ResumeThread(thread);
  CloseHandle(thread);
  const DWORD pid = GetProcessId(proc);
  std::printf("REPRO-REACHED ngen started pid=%lu: ngen.exe createpdb System.ni.dll in %s, cap %llu MB\n", pid,
              Narrow(imageDir).c_str(), capMB);
  std::fflush(stdout);

  // The write-up's captures, of ngen itself: three full dumps a second apart, and one when commit passes half the cap.
  std::vector<HANDLE> monitors;
  const std::wstring procdump = Which(L"CORPUS_PROCDUMP", L"procdump.exe");
  if (procdump.empty()) {
    std::printf("capture unavailable: no procdump.exe on PATH (Sysinternals; or set CORPUS_PROCDUMP)\n");
  } else {
    const std::wstring p = std::to_wstring(pid);
    for (const std::wstring& args : {L"-s 1 -n 3 -ma " + p + L" \"" + dumps + L"\"",
                                     L"-m " + std::to_wstring(capMB / 2) + L" -ma " + p + L" \"" + dumps + L"\""})
      if (HANDLE m = Start(procdump, L"\"" + procdump + L"\" -accepteula " + args, L"", 0, nullptr, nullptr))
        monitors.push_back(m);
    std::printf("capture: %s -s 1 -n 3 -ma %lu, and -m %llu -ma %lu, into %s\n", Narrow(procdump).c_str(), pid,
                capMB / 2, pid, Narrow(dumps).c_str());
  }

  // Commit every 100 ms; the fastest growth over any one-second window.
  std::deque<std::pair<ULONGLONG, SIZE_T>> window;
  const ULONGLONG t0 = GetTickCount64();
  double fastest = 0;
  SIZE_T peak = 0;
  bool timedOut = false;
  while (WaitForSingleObject(proc, 100) == WAIT_TIMEOUT) {
    PROCESS_MEMORY_COUNTERS_EX pmc{};
    if (!GetProcessMemoryInfo(proc, (PROCESS_MEMORY_COUNTERS*)&pmc, sizeof pmc)) continue;
    const ULONGLONG now = GetTickCount64();
    window.emplace_back(now, pmc.PrivateUsage);
    while (window.size() > 1 && now - window.front().first > 1000) window.pop_front();
    if (now - window.front().first >= 900) {
      const double rate = ((double)window.back().second - (double)window.front().second) / (1 << 30) /
                          ((now - window.front().first) / 1000.0);
      if (rate > fastest) fastest = rate;
    }
    if (pmc.PrivateUsage > peak) peak = pmc.PrivateUsage;
    if ((now - t0) / 1000.0 > maxSeconds) { timedOut = true; TerminateJobObject(job, 1); }
  }
  DWORD code = 0;
  GetExitCodeProcess(proc, &code);
  JOBOBJECT_EXTENDED_LIMIT_INFORMATION used{};
  QueryInformationJobObject(job, JobObjectExtendedLimitInformation, &used, sizeof used, nullptr);
  const unsigned long long peakMB = (unsigned long long)std::max<SIZE_T>(peak, used.PeakProcessMemoryUsed) >> 20;
  const double seconds = (GetTickCount64() - t0) / 1000.0;
  std::printf("METRIC {\"peak_commit_mb\": %llu, \"growth_gb_per_s\": %.3f, \"ngen_s\": %.2f, \"ngen_exit\": %lu}\n",
              peakMB, fastest, seconds, code);
  for (HANDLE m : monitors) {
    if (WaitForSingleObject(m, 120000) == WAIT_TIMEOUT) TerminateProcess(m, 1);
    CloseHandle(m);
  }

  // The stack of the first dump: cdb -z, as WinDbg's k shows it in the write-up.
  const std::wstring cdb = Which(L"CORPUS_CDB", L"cdb.exe");
  find = FindFirstFileW((dumps + L"\\*.dmp").c_str(), &fd);
  if (find == INVALID_HANDLE_VALUE) {
    std::printf("stack unavailable: no dump in %s\n", Narrow(dumps).c_str());
  } else if (cdb.empty()) {
    FindClose(find);
    std::printf("stack unavailable: no cdb.exe on PATH (Debugging Tools for Windows; or set CORPUS_CDB)\n");
  } else {
    FindClose(find);
    SECURITY_ATTRIBUTES sa{sizeof sa, nullptr, TRUE};
    const std::wstring log = dumps + L"\\stack.txt";
    HANDLE f = CreateFileW(log.c_str(), GENERIC_WRITE, FILE_SHARE_READ, &sa, CREATE_ALWAYS, 0, nullptr);
    if (HANDLE c = Start(cdb, L"\"" + cdb + L"\" -z \"" + dumps + L"\\" + fd.cFileName + L"\" -c \".symfix; .reload; k; q\"",
                         L"", 0, f, nullptr)) {
      WaitForSingleObject(c, 300000);
      CloseHandle(c);
    }
    CloseHandle(f);
    if (FILE* in = _wfopen(log.c_str(), L"r")) {
      char line[1024];
      while (std::fgets(line, sizeof line, in))
        if (std::strchr(line, '!')) std::printf("stack: %s", line);
      std::fclose(in);
    }
  }

  if (!timedOut && fastest >= growthGBps && peakMB * 10 >= capMB * 9)
    std::printf("REPRO-REACHED commit grew at %.2f GB/s to the cap (peak %llu MB of %llu MB); ngen exit 0x%lx\n",
                fastest, peakMB, capMB, code);
  else
    std::printf("REPRO-REACHED ngen finished: exit 0x%lx%s, peak commit %llu MB, fastest growth %.2f GB/s, %.1f s\n",
                code, timedOut ? " (killed at the time limit)" : "", peakMB, fastest, seconds);
  std::printf("REPRO-DONE\n");
  CloseHandle(proc);
  CloseHandle(job);
  return 0;
}
