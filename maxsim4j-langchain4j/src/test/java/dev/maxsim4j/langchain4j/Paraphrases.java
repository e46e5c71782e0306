package dev.maxsim4j.langchain4j;

import java.util.Map;

/** For each bundled paragraph (by title), a query that says the same in other words. */
final class Paraphrases {
  private Paraphrases() {}

  static final Map<String, String> BY_TITLE = Map.of(
      "Sourdough", "how can bread rise with wild yeast instead of store-bought yeast",
      "Tides", "why does the ocean go up and down twice a day because of the moon",
      "Bees", "how do bees let the hive know where food can be found",
      "Vaccines", "how does immunization prepare the body's defences against an infection",
      "Volcanoes", "where do volcanoes appear and why does magma come up",
      "Chess openings", "what should a player do in the first moves of a chess game",
      "Photosynthesis", "how do leaves turn sunlight into sugar and give off oxygen",
      "Compound interest", "why do savings grow faster when the interest is reinvested for many years",
      "Glaciers", "how does slowly moving ice shape mountain valleys",
      "Garbage collection", "how does the JVM reclaim memory from objects nobody references");
}
