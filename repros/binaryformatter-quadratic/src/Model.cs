// binaryformatter-quadratic: BinaryFormatter deserialization is O(n^2) on Mono/.NET Framework (ObjectManager's 4096-bucket table); write-up: docs/labs/binaryformatter-quadratic.md
using System;
using System.Collections.Generic;

namespace Corpus.Repros.BinaryFormatterQuadratic
{
    // The object graph from the serialization performance write-up:
    // one shelf holding N books, plus a private field that BinaryFormatter
    // must carry across (it serializes fields, public or not).
    [Serializable]
    public class BookShelf
    {
        public List<Book> Books { get; set; }

#pragma warning disable 414 // only ever read back through reflection, like a real private member
        private string Secret;
#pragma warning restore 414

        public BookShelf(string secret)
        {
            Secret = secret;
            Books = new List<Book>();
        }

        public BookShelf()
        {
            Books = new List<Book>();
        }
    }

    [Serializable]
    public class Book
    {
        public string Title;
        public int Id;
    }
}
