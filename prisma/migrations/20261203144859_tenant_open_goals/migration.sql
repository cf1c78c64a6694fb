-- AlterTable
ALTER TABLE "tenants" ADD COLUMN     "open_goals" INTEGER NOT NULL DEFAULT 0;

-- The database keeps the count itself: one function keeps it on every insert, delete and change of the
-- state or tenant of a goal, whichever code (or person) makes the change. A goal has ended in verified,
-- failed and cancelled (the terminal states of the machine); every other state is open. The triggers fire
-- only when the open-ness (or the tenant) of a row changes, so the many updates of the version of an open
-- goal by the runner touch nothing. Creating them locks the goals table against writes until this
-- migration commits, so the count below cannot miss a goal written meanwhile.
CREATE FUNCTION "goals_open_count"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP IN ('UPDATE', 'DELETE') AND OLD."state" NOT IN ('verified', 'failed', 'cancelled') THEN
    UPDATE "tenants" SET "open_goals" = "open_goals" - 1 WHERE "id" = OLD."tenant_id";
  END IF;
  IF TG_OP IN ('INSERT', 'UPDATE') AND NEW."state" NOT IN ('verified', 'failed', 'cancelled') THEN
    UPDATE "tenants" SET "open_goals" = "open_goals" + 1 WHERE "id" = NEW."tenant_id";
  END IF;
  RETURN NULL;
END
$$;

CREATE TRIGGER "goals_open_count_insert" AFTER INSERT ON "goals" FOR EACH ROW
  WHEN (NEW."state" NOT IN ('verified', 'failed', 'cancelled'))
  EXECUTE FUNCTION "goals_open_count"();
CREATE TRIGGER "goals_open_count_delete" AFTER DELETE ON "goals" FOR EACH ROW
  WHEN (OLD."state" NOT IN ('verified', 'failed', 'cancelled'))
  EXECUTE FUNCTION "goals_open_count"();
CREATE TRIGGER "goals_open_count_update" AFTER UPDATE OF "state", "tenant_id" ON "goals" FOR EACH ROW
  WHEN ((OLD."state" NOT IN ('verified', 'failed', 'cancelled')) IS DISTINCT FROM (NEW."state" NOT IN ('verified', 'failed', 'cancelled'))
        OR OLD."tenant_id" IS DISTINCT FROM NEW."tenant_id")
  EXECUTE FUNCTION "goals_open_count"();

UPDATE "tenants" t SET "open_goals" = (
  SELECT count(*) FROM "goals" g WHERE g."tenant_id" = t."id" AND g."state" NOT IN ('verified', 'failed', 'cancelled')
);
