using Corpus.Harness.Containment;
using System.Runtime.InteropServices;
using Corpus.Harness.Capture;
using Corpus.Harness.Model;

namespace Corpus.Harness.Subjects;

/// <summary>
/// Native programs built with a GCC sanitizer: linux-asan (AddressSanitizer) and linux-tsan (ThreadSanitizer).
/// The case's CMake target is built into its own flavor folder with -fsanitize, and every run gets options that
/// stop at the first report with an abort (so a crash capture gets its core) and log to stderr.
/// </summary>
public sealed class SanitizerKind : ISubjectKind
{
    /// <summary>What one sanitizer subject means: the -fsanitize name, its runtime library, its options variable.</summary>
    public sealed record Sanitizer(string Subject, string Flag, string Library, string OptionsVariable, string Options);

    public static readonly IReadOnlyList<Sanitizer> Sanitizers =
    [
        // disable_coredump=0: ASan and TSan skip the core by default on 64-bit; the crash capture needs it.
        new("linux-asan", "address", "libasan.so", "ASAN_OPTIONS",
            "abort_on_error=1:halt_on_error=1:disable_coredump=0:log_path=stderr"),
        new("linux-tsan", "thread", "libtsan.so", "TSAN_OPTIONS",
            "abort_on_error=1:halt_on_error=1:disable_coredump=0:log_path=stderr"),
    ];

    private readonly IReadOnlyList<string> _libraryDirs;

    /// <param name="libraryDirs">Where GCC keeps its sanitizer runtimes; tests give their own.</param>
    public SanitizerKind(IReadOnlyList<string>? libraryDirs = null) =>
        _libraryDirs = libraryDirs ?? GccLibraryDirs();

    public string Name => "sanitizer";
    public IReadOnlyList<string> BuiltIns => Sanitizers.Select(s => s.Subject).ToList();
    public IReadOnlyList<string> UserPrefixes => [];
    public string UserPathMeaning => "";
    public SubjectCapabilities Capabilities(string subject) => SubjectCapabilities.NativePrograms;

    public static Sanitizer Of(Subject s) => Sanitizers.First(x => x.Subject == s.Name);

    public Subject Resolve(string spec, string? userPath, string root)
    {
        var san = Sanitizers.First(x => x.Subject == spec);
        if (IHost.Current.Platform != IHost.Linux) return new(spec, this, "/", null, "needs Linux");
        var lib = _libraryDirs.Select(d => Path.Combine(d, san.Library)).FirstOrDefault(File.Exists);
        return lib is null
            ? new(spec, this, "/", null, $"GCC's {san.Library} is not installed (Debian: the libasan/libtsan package of gcc)")
            : new(spec, this, lib, Path.GetFileName(Path.GetDirectoryName(lib)), null);
    }

    public BuildRecipe Recipe(Subject s, Manifest m, CaseSpec cs)
    {
        if (cs.CmakeTarget is not { } target) return new NoBuild($"case {cs.Id} has no native program");
        var flags = $"-fsanitize={Of(s).Flag} -fno-omit-frame-pointer -g";
        return new CmakeBuild(target, $"cmake-{Of(s).Flag}",
                              [$"-DCMAKE_C_FLAGS={flags}", $"-DCMAKE_CXX_FLAGS={flags}",
                               $"-DCMAKE_EXE_LINKER_FLAGS=-fsanitize={Of(s).Flag}"]);
    }

    public Launch Launch(Subject s, string program, IReadOnlyList<string> args, LaunchOptions options)
    {
        var san = Of(s);
        var env = new Dictionary<string, string>(options.Env);
        // The case's own options come last, so they win (the sanitizers read left to right).
        env[san.OptionsVariable] = env.TryGetValue(san.OptionsVariable, out var own) && own.Length > 0 ? $"{san.Options}:{own}" : san.Options;
        return new Launch(program, args, env);
    }

    public CellIsolation Isolate(Subject s, string cellDir) => CellIsolation.None;

    public ICaptureBackend SnapshotBackend(Subject s, CaptureContext context) => new LinuxProcDump(context.Tools);

    public string CrashExecutable(Subject s, string program) => program;

    public string Describe(Subject s) => $"native, gcc -fsanitize={Of(s).Flag} (GCC {s.Version}, {s.Path}) on {RuntimeInformation.OSDescription}";

    private static IReadOnlyList<string> GccLibraryDirs()
    {
        const string gcc = "/usr/lib/gcc";
        if (!Directory.Exists(gcc)) return [];
        // /usr/lib/gcc/<triplet>/<major>/: newest major first.
        return Directory.GetDirectories(gcc).SelectMany(Directory.GetDirectories)
            .OrderByDescending(d => int.TryParse(Path.GetFileName(d), out var v) ? v : 0).ToList();
    }
}
