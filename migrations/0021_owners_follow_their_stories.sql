-- Every story's owner follows it, so they hear when someone continues it: a story made from now on gets that follow
-- in its creation batch (src/domain/stories.ts); this gives it to the stories made before. An owner who already
-- follows their story keeps that follow; the stories' follower counts are then counted again from the follows.
INSERT INTO `follows` (`id`, `follower_id`, `follower_type`, `target_type`, `target_id`, `created_at`)
SELECT lower(hex(randomblob(4)) || '-' || hex(randomblob(2)) || '-4' || substr(hex(randomblob(2)), 2) || '-' || substr('89ab', 1 + (random() & 3), 1) || substr(hex(randomblob(2)), 2) || '-' || hex(randomblob(6))),
  s.`owner_id`, s.`owner_type`, 'story', s.`id`, s.`created_at`
FROM `stories` s WHERE true
ON CONFLICT (`follower_id`, `target_type`, `target_id`) DO NOTHING;
--> statement-breakpoint
INSERT INTO `follow_counts` (`target_type`, `target_id`, `followers`)
SELECT 'story', `target_id`, count(*) FROM `follows` WHERE `target_type` = 'story' GROUP BY `target_id` HAVING true
ON CONFLICT (`target_type`, `target_id`) DO UPDATE SET `followers` = excluded.`followers`;
