// Copies a compiler folder (Microsoft.CodeAnalysis.dll and Microsoft.CodeAnalysis.CSharp.dll) with one instruction of
// LanguageParser.ParseModifiers changed: in the `ref` case, the test of forAccessors loads false instead, so the branch
// that eats `ref` before an accessor (what dotnet/roslyn#23905 added) is never taken and the case returns, as 2.6's did.
// Everything else of the compiler is the original. It refuses any assembly whose IL is not shaped as 2.10.0's is.
using Mono.Cecil;
using Mono.Cecil.Cil;

if (args.Length != 2)
{
    Console.Error.WriteLine("usage: TakeOutTheFix FROM_DIR TO_DIR   (FROM_DIR holds Microsoft.CodeAnalysis.CSharp.dll and Microsoft.CodeAnalysis.dll)");
    return 2;
}
var (from, to) = (args[0], args[1]);
var csharp = Path.Combine(from, "Microsoft.CodeAnalysis.CSharp.dll");
var resolver = new DefaultAssemblyResolver();
resolver.AddSearchDirectory(from);
resolver.AddSearchDirectory(Path.GetDirectoryName(typeof(object).Assembly.Location)!);
using var module = ModuleDefinition.ReadModule(csharp, new ReaderParameters { AssemblyResolver = resolver });
var parser = module.GetType("Microsoft.CodeAnalysis.CSharp.Syntax.InternalSyntax.LanguageParser");
var method = parser?.Methods.SingleOrDefault(m => m.Name == "ParseModifiers");
int Refuse(string why)
{
    Console.Error.WriteLine($"TakeOutTheFix: {csharp}: {why}; nothing written");
    return 2;
}
if (method is null) return Refuse("no single LanguageParser.ParseModifiers");
var calls = method.Body.Instructions.Where(i => i.OpCode == OpCodes.Call && i.Operand is MethodReference r && r.Name == "IsPossibleAccessorModifier").ToList();
if (calls.Count != 1) return Refuse($"ParseModifiers calls IsPossibleAccessorModifier {calls.Count} times, not once");
// forAccessors; brfalse END; this; call IsPossibleAccessorModifier; brfalse END; … END: ret
var test = calls[0].Previous?.Previous?.Previous;
var parameter = test?.OpCode == OpCodes.Ldarg_2 ? method.Parameters[1] : null;
if (parameter?.Name != "forAccessors" || test!.Next.OpCode != OpCodes.Brfalse_S || calls[0].Next.OpCode != OpCodes.Brfalse_S
    || test.Next.Operand != calls[0].Next.Operand || ((Instruction)test.Next.Operand).OpCode != OpCodes.Ret)
    return Refuse("the `ref` case is not `if (forAccessors && IsPossibleAccessorModifier()) … else return`");

var end = (Instruction)test.Next.Operand;
Console.WriteLine($"{module.Assembly.Name.Name} {module.Assembly.Name.Version}, {method.DeclaringType.Name}.{method.Name}, the `ref` case after its `struct` test:");
for (var i = test; i is not null && i.Previous != end; i = i.Next)
    Console.WriteLine($"  {i}{(i == test ? "    // forAccessors" : "")}");
test.OpCode = OpCodes.Ldc_I4_0;
Console.WriteLine($"changed: IL_{test.Offset:x4}: ldarg.2 (forAccessors) -> {test.OpCode} (false): the branch that eats `ref` is never taken");

Directory.CreateDirectory(to);
module.Write(Path.Combine(to, "Microsoft.CodeAnalysis.CSharp.dll"));
File.Copy(Path.Combine(from, "Microsoft.CodeAnalysis.dll"), Path.Combine(to, "Microsoft.CodeAnalysis.dll"), overwrite: true);
Console.WriteLine($"wrote {Path.Combine(to, "Microsoft.CodeAnalysis.CSharp.dll")}, beside a copy of Microsoft.CodeAnalysis.dll");
return 0;
