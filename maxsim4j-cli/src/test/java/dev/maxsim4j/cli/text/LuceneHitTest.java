package dev.maxsim4j.cli.text;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.apache.lucene.document.Document;
import org.apache.lucene.document.Field;
import org.apache.lucene.document.StoredField;
import org.apache.lucene.document.StringField;
import org.apache.lucene.index.CorruptIndexException;
import org.junit.jupiter.api.Test;

/**
 * A hit read from a Lucene document that lacks a stored field the text index writes (path, passage number, line),
 * or holds one of another type, is an error naming the index and the document, never a NullPointerException.
 */
class LuceneHitTest {
  private static Document doc(boolean path, boolean passage, boolean line, boolean numbers) {
    Document d = new Document();
    if (path) {
      d.add(new StringField("path", "a.txt", Field.Store.YES));
    }
    if (passage) {
      d.add(numbers ? new StoredField("passage", 2) : new StoredField("passage", "two"));
    }
    if (line) {
      d.add(new StoredField("line", 40));
    }
    return d;
  }

  @Test
  void aWholeDocumentIsItsHit() throws CorruptIndexException {
    assertEquals(new LuceneIndex.Hit("a.txt", 2, 40, 1.5f),
        LuceneIndex.hit(doc(true, true, true, true), 7, 1.5f, "/x/.maxsim4j/lucene"));
  }

  @Test
  void aMissingOrMistypedFieldNamesTheIndexTheDocumentAndTheField() {
    Object[][] cases = {{doc(false, true, true, true), "path"}, {doc(true, false, true, true), "passage number"},
        {doc(true, true, false, true), "line"}, {doc(true, true, true, false), "passage number"}};
    for (Object[] c : cases) {
      CorruptIndexException e = assertThrows(CorruptIndexException.class,
          () -> LuceneIndex.hit((Document) c[0], 7, 1f, "/x/.maxsim4j/lucene"));
      assertTrue(e.getMessage().contains("document 7 has no stored " + c[1] + " ")
          && e.getMessage().contains("/x/.maxsim4j/lucene") && e.getMessage().contains("rebuilds it"), e.getMessage());
    }
  }
}
