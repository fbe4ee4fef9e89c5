using System.Security.Cryptography;
using System.Text;
using Corpus.Harness.Capture;
using Corpus.Harness.Model;

namespace Corpus.Harness.Runner;

public sealed record BuildOutput(string? Program, string? Error, string Log);

/// <summary>
/// Builds a repro once per flavor (mono IL, net8.0, net10.0) into build/&lt;id&gt;/&lt;flavor&gt;/, skipping the
/// build when the sources have not changed since the last good one.
/// </summary>
public sealed class Builder(string root, IToolRunner runner)
{
    private readonly object _gate = new();

    public BuildOutput Ensure(Manifest m, string flavor, string? cmakeTarget = null)
    {
        lock (_gate)
        {
            var outDir = Path.Combine(root, "build", m.Id, flavor);
            var log = Path.Combine(outDir, $"build{(cmakeTarget is null ? "" : "-" + cmakeTarget)}.log");
            var stamp = Path.Combine(outDir, $".stamp{(cmakeTarget is null ? "" : "-" + cmakeTarget)}");
            var hash = SourceHash(m, flavor);
            var program = flavor switch
            {
                "mono" => Path.Combine(outDir, (m.Build.Assembly ?? m.Id) + ".exe"),
                "cmake" => Path.Combine(outDir, cmakeTarget ?? throw new ArgumentException("a cmake build needs a target")),
                _ => Path.Combine(outDir, (m.Build.Assembly ?? m.Id) + ".dll"),
            };
            if (File.Exists(stamp) && File.ReadAllText(stamp) == hash && File.Exists(program))
                return new BuildOutput(program, null, log);
            Directory.CreateDirectory(outDir);
            ToolResult r;
            if (flavor == "mono")
            {
                if (m.Build.MonoSources.Count == 0)
                    return new BuildOutput(null, $"{m.File}: field 'build.mono' is missing, so there is no Mono build", log);
                var sources = ExpandSources(m);
                if (sources.Count == 0)
                    return new BuildOutput(null, $"{m.File}: field 'build.mono.sources' matches no file", log);
                r = runner.Run("mcs", ["-nologo", "-optimize+", "-debug", "-unsafe", $"-out:{program}", .. sources],
                               TimeSpan.FromMinutes(5));
            }
            else if (flavor == "cmake")
            {
                if (m.Build.CmakeDir is null)
                    return new BuildOutput(null, $"{m.File}: field 'build.cmake' is missing, so there is no native build", log);
                var configure = runner.Run("cmake", ["-S", Path.Combine(m.Dir, m.Build.CmakeDir), "-B", outDir,
                                                     "-DCMAKE_BUILD_TYPE=Release"], TimeSpan.FromMinutes(5));
                r = configure;
                if (configure.ExitCode == 0)
                {
                    var compile = runner.Run("cmake", ["--build", outDir, "--target", cmakeTarget!, "-j", "2"], TimeSpan.FromMinutes(10));
                    r = compile with { Stdout = configure.Stdout + compile.Stdout, Stderr = configure.Stderr + compile.Stderr };
                }
            }
            else
            {
                if (m.Build.DotnetProject is null)
                    return new BuildOutput(null, $"{m.File}: field 'build.dotnet' is missing, so there is no .NET build", log);
                r = runner.Run("dotnet", ["build", Path.Combine(m.Dir, m.Build.DotnetProject), "-c", "Release", "-f", flavor,
                                          "-o", outDir, "-nologo", "-v", "q", "-p:TreatWarningsAsErrors=false"],
                               TimeSpan.FromMinutes(10));
            }
            File.WriteAllText(log, r.Stdout + r.Stderr);
            if (r.ExitCode != 0 || !File.Exists(program))
                return new BuildOutput(null, $"build for {flavor} failed ({r.Describe("build")}); see {log}", log);
            File.WriteAllText(stamp, hash);
            return new BuildOutput(program, null, log);
        }
    }

    private static IReadOnlyList<string> ExpandSources(Manifest m)
    {
        var files = new List<string>();
        foreach (var pattern in m.Build.MonoSources)
        {
            var dir = Path.GetFullPath(Path.Combine(m.Dir, Path.GetDirectoryName(pattern) ?? ""));
            if (!Directory.Exists(dir)) continue;
            files.AddRange(Directory.GetFiles(dir, Path.GetFileName(pattern)).Order());
        }
        return files;
    }

    /// <summary>Everything that can change the program: the repro's own files except tests, build output and docs.</summary>
    private static string SourceHash(Manifest m, string flavor)
    {
        using var sha = SHA256.Create();
        var files = Directory.GetFiles(m.Dir, "*", SearchOption.AllDirectories)
            .Where(f => !f.Split(Path.DirectorySeparatorChar).Any(p => p is "bin" or "obj" or "tests"))
            .Order(StringComparer.Ordinal);
        var sb = new StringBuilder(flavor);
        foreach (var f in files)
            sb.Append(Path.GetRelativePath(m.Dir, f)).Append(Convert.ToHexString(SHA256.HashData(File.ReadAllBytes(f))));
        return Convert.ToHexString(sha.ComputeHash(Encoding.UTF8.GetBytes(sb.ToString())));
    }
}
