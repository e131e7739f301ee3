"""Text analysis shared by the stages: cleaning, language identification, sentence
splitting, the clause-form registry and the regulation lookup."""
