package dev.maxsim4j.langchain4j;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.langchain4j.data.document.Metadata;
import dev.langchain4j.data.embedding.Embedding;
import dev.langchain4j.data.message.UserMessage;
import dev.langchain4j.data.segment.TextSegment;
import dev.langchain4j.model.embedding.EmbeddingModel;
import dev.langchain4j.model.embedding.onnx.allminilml6v2.AllMiniLmL6V2EmbeddingModel;
import dev.langchain4j.rag.AugmentationRequest;
import dev.langchain4j.rag.AugmentationResult;
import dev.langchain4j.rag.DefaultRetrievalAugmentor;
import dev.langchain4j.rag.content.Content;
import dev.langchain4j.rag.content.ContentMetadata;
import dev.langchain4j.rag.content.aggregator.ReRankingContentAggregator;
import dev.langchain4j.rag.content.retriever.EmbeddingStoreContentRetriever;
import dev.langchain4j.store.embedding.EmbeddingMatch;
import dev.langchain4j.store.embedding.EmbeddingSearchRequest;
import dev.langchain4j.store.embedding.EmbeddingSearchResult;
import dev.langchain4j.store.embedding.EmbeddingStore;
import dev.langchain4j.store.embedding.RelevanceScore;
import dev.maxsim4j.MaxSim;
import dev.maxsim4j.TokenBatch;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The reranker as LangChain4j runs it: an embedding store's retriever, the reranking aggregator and the retrieval
 * augmentor end to end; and thousands of segments (duplicates, metadata) across groups, scored as the core scores
 * the encoder's own vectors.
 */
class HostileRetrievalTest extends WithModel {
  /** The least an in-memory store needs: every match by cosine. */
  private static final class ListStore implements EmbeddingStore<TextSegment> {
    private final List<EmbeddingMatch<TextSegment>> rows = new ArrayList<>();

    @Override
    public String add(Embedding embedding) {
      return add(embedding, null);
    }

    @Override
    public void add(String id, Embedding embedding) {
      rows.add(new EmbeddingMatch<>(0.0, id, embedding, null));
    }

    @Override
    public String add(Embedding embedding, TextSegment segment) {
      String id = "id" + rows.size();
      rows.add(new EmbeddingMatch<>(0.0, id, embedding, segment));
      return id;
    }

    @Override
    public List<String> addAll(List<Embedding> embeddings) {
      return embeddings.stream().map(this::add).toList();
    }

    @Override
    public EmbeddingSearchResult<TextSegment> search(EmbeddingSearchRequest request) {
      return new EmbeddingSearchResult<>(rows.stream()
          .map(r -> new EmbeddingMatch<>(RelevanceScore.fromCosineSimilarity(
              dev.langchain4j.store.embedding.CosineSimilarity.between(r.embedding(), request.queryEmbedding())),
              r.embeddingId(), r.embedding(), r.embedded()))
          .filter(m -> m.score() >= request.minScore())
          .sorted(Comparator.comparingDouble((EmbeddingMatch<TextSegment> m) -> m.score()).reversed())
          .limit(request.maxResults()).toList());
    }
  }

  @Test
  void retrieverAggregatorAndAugmentorEndToEnd() {
    EmbeddingModel embeddings = new AllMiniLmL6V2EmbeddingModel();
    ListStore store = new ListStore();
    for (SampleTexts.Paragraph p : SampleTexts.paragraphs()) {
      TextSegment s = TextSegment.from(p.text(), Metadata.from("title", p.title()));
      store.add(embeddings.embed(s).content(), s);
    }
    MaxSimScoringModel model = new MaxSimScoringModel(encoder, maxSim);
    DefaultRetrievalAugmentor augmentor = DefaultRetrievalAugmentor.builder()
        .contentRetriever(EmbeddingStoreContentRetriever.builder().embeddingStore(store).embeddingModel(embeddings)
            .maxResults(10).build())
        .contentAggregator(ReRankingContentAggregator.builder().scoringModel(model).maxResults(3).build())
        .build();
    for (SampleTexts.Paragraph p : SampleTexts.paragraphs()) {
      UserMessage question = UserMessage.from(Paraphrases.BY_TITLE.get(p.title()));
      AugmentationResult result = augmentor.augment(new AugmentationRequest(question,
          new dev.langchain4j.rag.query.Metadata(question, "chat", List.of())));
      List<Content> contents = result.contents();
      assertEquals(3, contents.size());
      assertEquals(p.title(), contents.get(0).textSegment().metadata().getString("title"), question.singleText());
      double top = (Double) contents.get(0).metadata().get(ContentMetadata.RERANKED_SCORE);
      assertEquals(model.score(contents.get(0).textSegment(), question.singleText()).content(), top);
    }
  }

  @Test
  void thousandsOfSegmentsWithDuplicatesScoreAsTheCoreScoresTheirVectors() {
    List<String> texts = new ArrayList<>();
    List<TextSegment> segments = new ArrayList<>();
    String[] words = "tide moon sea river glacier rain wind salt shore wave".split(" ");
    for (int i = 0; i < 2100; i++) {
      String t = i % 7 == 0 ? "the tide rises with the moon" // duplicates across groups
          : words[i % 10] + " " + words[(i / 10) % 10] + " " + i;
      texts.add(t);
      segments.add(TextSegment.from(t, Metadata.from("i", String.valueOf(i))));
    }
    List<Double> scores = new MaxSimScoringModel(encoder, maxSim).scoreAll(segments, "why does the sea rise")
        .content();
    assertEquals(texts.size(), scores.size());
    TokenBatch q = encoder.encode("why does the sea rise");
    float[] direct = maxSim.scores(q, encoder.encode(texts))[0];
    for (int i = 0; i < texts.size(); i++) {
      assertEquals(MaxSimScoringModel.meanCosine(direct[i], q.validTokens(0)), scores.get(i), "segment " + i);
      if (i % 7 == 0) {
        assertEquals(scores.get(0), scores.get(i), "duplicate " + i);
      }
    }
    assertTrue(scores.get(0) > 0);
  }
}
