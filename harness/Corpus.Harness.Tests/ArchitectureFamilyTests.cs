using System.Text.RegularExpressions;
using Corpus.Harness.Signatures;

namespace Corpus.Harness.Tests;

/// <summary>
/// Families and evidence checks live in Signatures/: the runner, the report and the model ask them through their
/// contracts and never name one. Found by reflection, so a new family is covered without editing this test.
/// </summary>
public sealed class ArchitectureFamilyTests
{
    private static readonly string Sources = Path.Combine(RoslynTriggerTests.Root, "harness", "Corpus.Harness");

    private static IEnumerable<Type> Concrete<T>() =>
        typeof(ISignatureFamily).Assembly.GetTypes().Where(t => typeof(T).IsAssignableFrom(t) && t is { IsClass: true, IsAbstract: false });

    /// <summary>Every .cs file outside the folder that names one of the types, with the names it uses.</summary>
    public static List<string> NamedOutside(IEnumerable<Type> types, string ownFolder)
    {
        var names = types.Select(t => t.Name).ToList();
        var re = new Regex($@"\b({string.Join("|", names)})\b");
        var own = Path.Combine(Sources, ownFolder) + Path.DirectorySeparatorChar;
        return Directory.EnumerateFiles(Sources, "*.cs", SearchOption.AllDirectories)
            .Where(f => !f.StartsWith(own, StringComparison.Ordinal) && !f.Contains($"{Path.DirectorySeparatorChar}obj{Path.DirectorySeparatorChar}"))
            .SelectMany(f => re.Matches(File.ReadAllText(f)).Select(m => $"{Path.GetRelativePath(Sources, f)}: {m.Value}"))
            .Distinct().ToList();
    }

    [Fact]
    public void NoFamilyOrEvidenceCheckIsNamedOutsideSignatures()
    {
        var types = Concrete<ISignatureFamily>().Concat(Concrete<IEvidenceCheck>()).ToList();
        Assert.True(types.Count >= 11, $"found only {types.Count} families and evidence checks");
        Assert.Empty(NamedOutside(types, "Signatures"));
    }

    [Fact]
    public void TheGrepSeesANameWhereOneIs()
    {
        // The check itself must be able to fail: the registry names every family, inside Signatures/.
        Assert.Contains(NamedOutside(Concrete<ISignatureFamily>(), "Report"), x => x.StartsWith("Signatures", StringComparison.Ordinal));
    }

    [Fact]
    public void EveryRegisteredBlockHasOneOwner()
    {
        var keys = SignatureFamilies.Default.SignatureKeys.ToList();
        Assert.Equal(keys.Count, keys.Distinct().Count());
        Assert.Equal(Concrete<ISignatureFamily>().Count(), SignatureFamilies.Default.Families.Count);
        Assert.Equal(Concrete<IEvidenceCheck>().Count(), SignatureFamilies.Default.Evidence.Count);
    }
}
